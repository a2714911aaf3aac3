import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'tollgate:isPublic';

/** Opts a route out of admin authentication (health probes only). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
