import { ApiProperty } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';

export class PutOrgRoleDto {
  @ApiProperty({
    enum: ['ORG_ADMIN', 'FINANCE'],
    nullable: true,
    description: 'The organisation-wide role, or null to withdraw it',
  })
  @ValidateIf((o: PutOrgRoleDto) => o.role !== null)
  @IsIn(['ORG_ADMIN', 'FINANCE'], { message: 'role must be ORG_ADMIN, FINANCE or null' })
  role!: 'ORG_ADMIN' | 'FINANCE' | null;
}
