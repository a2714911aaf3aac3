-- The MCP revision each upstream speaks, as its last catalog sync negotiated it (the newest the
-- upstream offers: 2026-07-28 through server/discover, else the version initialize agreed on).
-- Null until the first sync. The edge speaks the same revision to it.
ALTER TABLE "UpstreamServer" ADD COLUMN "protocolRevision" TEXT;
