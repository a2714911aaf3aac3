import { ApiProperty } from '@nestjs/swagger';
import type { ReviewedTool, ToolDiffResult } from '@tollgate/upstream-registry';
import { ToolView, toToolView } from '../upstreams/upstream.view';

/** A catalog tool with its stored disclosure data (summary, tier token counts, tier score). */
export class CatalogToolView extends ToolView {
  @ApiProperty({ example: 'github', description: 'The upstream’s namespace' }) namespace!: string;
  @ApiProperty({ nullable: true, type: String, description: 'One-line summary of the served definition (T2)' })
  summary!: string | null;
  @ApiProperty({ description: 'Tokens of the tool’s T2 search entry' }) summaryTokens!: number;
  @ApiProperty({ description: 'Tokens of the tool’s code-mode stub' }) stubTokens!: number;
  @ApiProperty({ description: 'Tier score from usage (0..1); orders the hot list' }) tierScore!: number;
  @ApiProperty({
    nullable: true,
    type: Number,
    description:
      '99th percentile of its calls’ output tokens over the tier-score window (null: no calls yet); a call reserves for this many, at most its output cap',
  })
  outputTokensP99!: number | null;
}

export function toCatalogToolView(t: ReviewedTool): CatalogToolView {
  return {
    ...toToolView(t.upstream.namespace, t),
    namespace: t.upstream.namespace,
    summary: t.summary,
    summaryTokens: t.summaryTokens,
    stubTokens: t.stubTokens,
    tierScore: t.tierScore,
    outputTokensP99: t.outputTokensP99,
  };
}

export class TextChangeView {
  @ApiProperty({ nullable: true, type: String }) before!: string | null;
  @ApiProperty({ nullable: true, type: String }) after!: string | null;
}

export class ChangedPropertyView {
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'The property’s JSON Schema in the pinned definition' }) before!: unknown;
  @ApiProperty({ description: 'The property’s JSON Schema in the latest definition' }) after!: unknown;
}

export class RequiredChangeView {
  @ApiProperty({ type: [String] }) before!: string[];
  @ApiProperty({ type: [String] }) after!: string[];
}

export class InputSchemaDiffView {
  @ApiProperty({ type: [String] }) added!: string[];
  @ApiProperty({ type: [String] }) removed!: string[];
  @ApiProperty({ type: [ChangedPropertyView] }) changed!: ChangedPropertyView[];
  @ApiProperty({ type: RequiredChangeView, nullable: true }) required!: RequiredChangeView | null;
}

export class ToolDiffView {
  @ApiProperty({ type: CatalogToolView }) tool!: CatalogToolView;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Hash of the definition the edge serves; null if never approved',
  })
  pinnedHash!: string | null;
  @ApiProperty({ description: 'Hash of the latest definition: send it back to approve' }) definitionHash!: string;
  @ApiProperty({ description: 'Whether the latest definition differs from the pinned one' }) changed!: boolean;
  @ApiProperty({ type: TextChangeView, nullable: true }) title!: TextChangeView | null;
  @ApiProperty({ type: TextChangeView, nullable: true }) description!: TextChangeView | null;
  @ApiProperty({ type: InputSchemaDiffView }) inputSchema!: InputSchemaDiffView;
  @ApiProperty({
    type: [String],
    description: 'Other parts that differ: inputSchema (keywords besides properties), outputSchema, annotations',
  })
  otherChanges!: string[];
  @ApiProperty({ description: 'Tokens the latest definition costs as a plain tools/list entry' })
  latestSchemaTokens!: number;
}

export function toToolDiffView(r: ToolDiffResult): ToolDiffView {
  const { diff } = r;
  return {
    tool: toCatalogToolView(r.tool),
    pinnedHash: diff.pinnedHash,
    definitionHash: diff.definitionHash,
    changed: diff.changed,
    title: diff.title,
    description: diff.description,
    inputSchema: diff.inputSchema,
    otherChanges: diff.otherChanges,
    latestSchemaTokens: r.latestSchemaTokens,
  };
}

export class TierScoresRequestedView {
  @ApiProperty({ description: 'The tier-scores job id' }) jobId!: string;
}
