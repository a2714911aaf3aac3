import { ApiProperty } from '@nestjs/swagger';
import { DISCLOSURE_MODES, SERVED_DISCLOSURE_MODES } from '@tollgate/kernel';

export class KeyPreviewView {
  @ApiProperty({ format: 'uuid' }) keyId!: string;
  @ApiProperty({
    enum: DISCLOSURE_MODES,
    description: 'The key’s own mode, else the most specific policy’s, else AUTO',
  })
  requestedMode!: string;
  @ApiProperty({
    enum: SERVED_DISCLOSURE_MODES,
    description: 'The mode the agent gets (AUTO resolved by catalog size)',
  })
  mode!: string;
  @ApiProperty({ type: 'array', items: { type: 'object' }, description: 'The initial tools/list the agent would read' })
  tools!: Record<string, unknown>[];
  @ApiProperty({ description: 'Tokens of that tools/list (o200k_base unless configured)' }) tokens!: number;
  @ApiProperty({ type: [String], description: 'Progressive: the hot tools (T0), best first' }) hot!: string[];
  @ApiProperty({ description: 'Tools the key may use' }) visibleTools!: number;
  @ApiProperty({ description: 'Tokens a plain tools/list of every tool the key may use would cost' })
  plainListTokens!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'Policy ceiling on any one disclosure answer' })
  maxAnswerTokens!: number | null;
}
