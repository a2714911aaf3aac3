-- The call log names the MCP session each call was made in (a link to the session's agent trail),
-- found by the call's ledger id among the trail's steps of its org.
CREATE INDEX "TrailEvent_orgId_callId_idx" ON "TrailEvent" ("orgId", "callId");
