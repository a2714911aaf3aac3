import { ApiProperty } from '@nestjs/swagger';

export class SessionUserView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty() email!: string;
}

/** Who is signed in: what the console builds its navigation from. */
export class SessionView {
  @ApiProperty({ type: SessionUserView, nullable: true, description: 'The person (null for a platform admin)' })
  user!: SessionUserView | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) orgId!: string | null;
  @ApiProperty({
    enum: ['PLATFORM_ADMIN', 'ORG_ADMIN', 'FINANCE', 'TEAM_ADMIN', 'MEMBER'],
    isArray: true,
    description: 'Every role held, strongest first',
  })
  roles!: string[];
  @ApiProperty({
    enum: ['PLATFORM_ADMIN', 'ORG_ADMIN', 'FINANCE', 'TEAM_ADMIN', 'MEMBER'],
    description: 'The role requests act with (the strongest held)',
  })
  role!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'The team a team admin or member acts for',
  })
  teamId!: string | null;
  @ApiProperty() platformAdmin!: boolean;
  @ApiProperty({
    enum: ['org-sso', 'platform-sso', 'bootstrap-token', 'bearer'],
    description: 'How the caller authenticated',
  })
  via!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Send it as X-CSRF-Token on every change made with the session cookie (null for bearer tokens)',
  })
  csrfToken!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When the session ends at the latest (it also ends after the idle timeout)',
  })
  expiresAt!: Date | null;
}
