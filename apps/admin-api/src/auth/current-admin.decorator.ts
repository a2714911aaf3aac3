import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { AdminPrincipal } from '@tollgate/identity';

/** The authenticated admin principal (set by the bearer strategy). */
export const CurrentAdmin = createParamDecorator((_data: unknown, ctx: ExecutionContext): AdminPrincipal => {
  return ctx.switchToHttp().getRequest<{ user: AdminPrincipal }>().user;
});
