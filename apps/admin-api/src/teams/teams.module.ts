import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { TeamsController } from './teams.controller';

/** Teams and their members. */
@Module({
  imports: [IdentityModule],
  controllers: [TeamsController],
})
export class TeamsModule {}
