import { errors } from 'oidc-provider';
import { OutboundException, OutboundExceptionCode } from '@tollgate/outbound';
import { describe, expect, it } from 'vitest';
import { clientMetadataDocumentProblem } from './client-metadata-document';

// The errors exactly as oidc-provider 9 raises them in client_id_metadata_document.js.
const fetchFailed = (options: unknown, detail?: string) =>
  detail === undefined
    ? new errors.InvalidClient('client_id metadata document fetch failed', options as never)
    : new errors.InvalidClient('client_id metadata document fetch failed', detail, options as never);

describe('clientMetadataDocumentProblem', () => {
  it('should name each reason a document cannot be used', () => {
    const refused = new TypeError('fetch failed', {
      cause: new OutboundException(
        OutboundExceptionCode.AddressRefused,
        '127.0.0.1 is loopback (OUTBOUND_ALLOW_CIDRS)',
      ),
    });
    expect(clientMetadataDocumentProblem(fetchFailed({ cause: refused }))).toBe(
      'refused by the outbound rule: 127.0.0.1 is loopback (OUTBOUND_ALLOW_CIDRS)',
    );
    const unresolved = new TypeError('fetch failed', {
      cause: new OutboundException(OutboundExceptionCode.NameUnresolved, 'cimd.invalid did not resolve'),
    });
    expect(clientMetadataDocumentProblem(fetchFailed({ cause: unresolved }))).toBe(
      'unreachable: cimd.invalid did not resolve',
    );
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) });
    expect(clientMetadataDocumentProblem(fetchFailed({ cause: reset }))).toBe('unreachable: ECONNREFUSED');
    expect(clientMetadataDocumentProblem(fetchFailed({ cause: new Error('response too large') }))).toBe(
      'too large: over 5120 bytes',
    );
    expect(clientMetadataDocumentProblem(fetchFailed({ cause: new SyntaxError('Unexpected token') }))).toBe(
      'invalid: the document is not JSON',
    );
    expect(clientMetadataDocumentProblem(fetchFailed({ cause: {} }, 'unexpected response status 404'))).toBe(
      'unreachable: the server answered HTTP 404',
    );
    expect(
      clientMetadataDocumentProblem(
        new errors.InvalidClientMetadata('client_id metadata document client_id does not match the expected value'),
      ),
    ).toBe('invalid: client_id metadata document client_id does not match the expected value');
  });

  it('should leave other errors alone', () => {
    expect(clientMetadataDocumentProblem(new errors.InvalidClient('client not found'))).toBeNull();
    expect(clientMetadataDocumentProblem(new Error('boom'))).toBeNull();
    expect(clientMetadataDocumentProblem(undefined)).toBeNull();
  });
});
