import { TokenEncodingName, countJsonTokens, countTokens } from '@tollgate/tokens';
import { JsonSchema } from './disclosure-tool';
import {
  DEFAULT_SUMMARY_CHARS,
  guessCategory,
  oneLineSummary,
  parameterSignature,
  simplifyParameters,
  typedStub,
} from './tool-summary';

/** What the profile of one tool is computed from: its exposed name and served definition. */
export interface ToolProfileInput {
  /** Exposed name, `<namespace>__<tool>`. */
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  /** Tokens of the tool as a plain `tools/list` entry (T3), already counted. */
  schemaTokens: number;
}

/** Per-tool disclosure data, computed once per definition hash at sync time. */
export interface ToolProfile {
  /** One line for the T2 search entry. */
  summary: string;
  /** Guessed from the exposed name and description, as the edge would guess it. */
  category: string;
  /** Tokens of the tool's T2 search entry (name, summary, params, schemaTokens; price and tier vary). */
  summaryTokens: number;
  /** Tokens of the tool's code-mode stub (a TypeScript declaration with a doc line). */
  stubTokens: number;
}

/**
 * The summary, category and per-tier token counts of a tool, exactly as progressive disclosure
 * renders them, so the worker can store them and nothing is recounted per request.
 */
export function profileTool(tool: ToolProfileInput, encoding?: TokenEncodingName): ToolProfile {
  const summary = oneLineSummary(tool.description ?? tool.title, DEFAULT_SUMMARY_CHARS);
  const entry = {
    name: tool.name,
    summary,
    params: parameterSignature(simplifyParameters(tool.inputSchema)),
    schemaTokens: tool.schemaTokens,
  };
  return {
    summary,
    category: guessCategory({ name: tool.name, description: tool.description }),
    summaryTokens: countJsonTokens(entry, encoding),
    stubTokens: countTokens(
      typedStub({ name: tool.name, description: tool.description ?? tool.title, inputSchema: tool.inputSchema }),
      encoding,
    ),
  };
}
