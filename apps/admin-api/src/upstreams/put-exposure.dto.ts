import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';

/** How an upstream's tools and prompts are named for agents. */
export class PutExposureDto {
  @ApiProperty({
    description:
      'true: tools and prompts keep their own names (refused with 409 when a name collides); false: `<namespace>__<name>`',
  })
  @IsBoolean()
  exposeUnprefixed!: boolean;
}
