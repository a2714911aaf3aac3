import { Inject, Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallAdmissionService } from '@tollgate/admission';
import { Clock, CLOCK } from '@tollgate/kernel';
import { PolicyService, effectiveOutputLimits } from '@tollgate/policy';
import { parseWithBigInts } from '@tollgate/tasks';
import { BUDGET_META_KEY, CALL_META_KEY, budgetMeta } from './call-meta';
import { GovernedCallPipeline, callMeta } from './governed-call.pipeline';
import { PricedCall, failedCallCost } from './priced-call';
import type { TaskSettlement } from './task-opening.service';

/** How a task ended, for its settlement: a completed task's result is answered like a call's. */
export type TaskEnding =
  { status: 'completed'; result: CallToolResult } | { status: 'failed' | 'cancelled' | 'expired' };

/** What settling a task gives every later poll: the agent's result (completed), or the call's cost. */
export interface TaskSettled {
  result?: CallToolResult;
  meta: Record<string, unknown>;
}

/**
 * The end of a governed call its upstream ran as a task (TaskOpening recorded it): settled and
 * metered once it ended, on whichever edge saw it end (a poll, its expiry; TaskRelay holds the
 * settlement claim). A completed task's result is answered like a call's (GovernedCallPipeline:
 * embedded resources, output budget, top-up, paging); any other ending is a failed call.
 */
@Injectable()
export class TaskSettler {
  constructor(
    private readonly pipeline: GovernedCallPipeline,
    private readonly policies: PolicyService,
    private readonly admission: CallAdmissionService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Settles and meters the task whose record keeps `settlementJson`; `retaken`: an earlier claim lapsed. */
  async settle(settlementJson: string, ending: TaskEnding, retaken = false): Promise<TaskSettled> {
    const { principal, call: stored, hold } = parseWithBigInts<TaskSettlement>(settlementJson);
    // The tool as a settlement needs it (names and upstream); the definition is not kept.
    const call = { ...stored, topUp: null } as PricedCall;
    // An earlier claim lapsed after its completion script had run (its edge died, or marking the
    // task settled failed): the counters and the outbox hold the call already, and its reservation
    // is gone. The answer is made again, with nothing charged or metered twice.
    if (retaken && !(await this.admission.stillReserved(hold))) {
      this.admission.handOver(hold);
      call.alreadyCharged = true;
    }
    try {
      if (ending.status !== 'completed') {
        const cost = failedCallCost(call);
        const standings = await this.pipeline.settleAndMeter(principal, call, hold, 'UPSTREAM_ERROR', cost, 0);
        return {
          meta: {
            [CALL_META_KEY]: callMeta(call, cost, 0, this.clock.now()),
            [BUDGET_META_KEY]: budgetMeta(standings),
          },
        };
      }
      const levels = await this.policies.levelsFor(principal);
      const limits = effectiveOutputLimits(levels);
      const answered = await this.pipeline.answerResult(principal, call, hold, ending.result, levels, limits);
      return { result: answered, meta: answered._meta ?? {} };
    } finally {
      // The hold is not released when settling fails: the task's settlement is retried (the next
      // poll or the expiry sweep), and a released reservation would read as "already charged".
      if (call.topUp) this.admission.release(call.topUp);
    }
  }
}
