import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The body of every error answer (for the OpenAPI spec). */
export class ErrorBodyView {
  @ApiProperty({ example: 400 }) statusCode!: number;
  @ApiProperty({ example: 'Bad Request' }) error!: string;
  @ApiProperty({ example: 'namespace must be lower-case letters, digits and single hyphens' }) message!: string;
  @ApiPropertyOptional({ type: [String], description: 'Every message, when validation found several problems' })
  messages?: string[];
  @ApiPropertyOptional({ example: 'namespace', description: 'The request field or path parameter at fault' })
  field?: string;
  @ApiProperty({
    example: 'VALIDATION_FAILED',
    description: 'A stable error code: the domain’s, or else the status’s name (FORBIDDEN, NOT_FOUND, ...)',
  })
  code!: string;
  @ApiPropertyOptional({
    enum: ['database', 'redis'],
    description: "On a 503: the store that is down (retry after the Retry-After header's seconds)",
  })
  dependency?: string;
  @ApiProperty({
    example: '2b1f0c4e-5c7a-4f62-9a51-0d1f2f1b9c3e',
    description: 'Same as the x-request-id response header',
  })
  requestId!: string;
}
