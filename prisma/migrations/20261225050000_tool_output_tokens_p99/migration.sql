-- The 99th percentile of a tool's output tokens over its recent calls, kept by the worker: a call
-- reserves its likely cost (this many tokens, at most its cap) instead of the cap's worst case.
ALTER TABLE "Tool" ADD COLUMN "outputTokensP99" INTEGER;
