-- A tool's execution.taskSupport as last listed, kept outside its pinned definition and hash.
ALTER TABLE "Tool" ADD COLUMN "taskSupport" TEXT;
