import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { TeamsController } from './teams.controller';

/** Teams and their members. */
@Module({
  imports: [DomainLibsModule],
  controllers: [TeamsController],
})
export class TeamsModule {}
