import { OutboundExceptionCode, outboundExceptionIn } from '@tollgate/outbound';

/** oidc-provider's limit on a Client ID Metadata Document's body. */
export const CLIENT_METADATA_DOCUMENT_LIMIT_BYTES = 5 * 1024;

/**
 * Why a Client ID Metadata Document could not be used, in words a client's developer can act on
 * (unreachable, refused by the outbound rule, too large, invalid); null when `err` is not about one.
 * oidc-provider says only "client_id metadata document fetch failed" and keeps the reason in `cause`.
 */
export function clientMetadataDocumentProblem(err: unknown): string | null {
  const e = err as { error_description?: string; error_detail?: string; cause?: unknown };
  const description = e?.error_description ?? '';
  if (!description.startsWith('client_id metadata document')) return null;
  if (description !== 'client_id metadata document fetch failed') return `invalid: ${description}`;
  const cause = e.cause as { message?: string; status?: number } | undefined;
  const refused = outboundExceptionIn(cause);
  if (refused?.code === OutboundExceptionCode.NameUnresolved) return `unreachable: ${refused.message}`;
  if (refused) return `refused by the outbound rule: ${refused.message}`;
  if (cause instanceof SyntaxError) return 'invalid: the document is not JSON';
  if (cause instanceof Error && cause.message === 'response too large')
    return `too large: over ${CLIENT_METADATA_DOCUMENT_LIMIT_BYTES} bytes`;
  if (e.error_detail?.startsWith('unexpected response status'))
    return `unreachable: the server answered ${e.error_detail.replace('unexpected response status ', 'HTTP ')}`;
  const code = (cause as { cause?: { code?: string } } | undefined)?.cause?.code;
  return `unreachable: ${code ?? (cause instanceof Error ? cause.message : 'the request failed')}`;
}
