-- The organisation's currency (ISO 4217) for money in reports and the console (hand-written).
-- Amounts stay integer micro-units: the code only names their unit. Existing orgs were USD.
ALTER TABLE "Organization" ADD COLUMN "currency" TEXT NOT NULL DEFAULT 'USD';
