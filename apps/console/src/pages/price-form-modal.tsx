import { Autocomplete, Group, Select, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { CatalogTool, PriceRule, Upstream } from '../api/governance-types';
import { globMatches, takeover } from '../lib/price-match';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { Money } from '../components/money-text';
import { decimalToMicros } from '../lib/money-input';
import { dayIn, formatTimestamp, isDay } from '../lib/dates';
import { useFormSubmit } from '../lib/form-submit';
import { useLoad } from '../lib/use-load';
import { zonedToUtc } from '../lib/zoned-time';
import { useSession } from '../session';

/** A day and time in the org's zone, or empty for "now": the ISO instant the API takes. */
export function instantOf(day: string, time: string, timeZone: string): string | undefined {
  return day ? zonedToUtc(day, time || '00:00', timeZone).toISOString() : undefined;
}

/** Empty (now), or a day with an optional HH:MM: what instantOf can read. */
export function isWhen(day: string, time: string): boolean {
  return !day || (isDay(day) && (!time || /^\d{2}:\d{2}$/.test(time)));
}

/** The day and time inputs; a malformed entry shows the expected format, else the API's refusal. */
export function WhenFields({
  day,
  time,
  setDay,
  setTime,
  what,
  apiError,
}: {
  day: string;
  time: string;
  setDay: (v: string) => void;
  setTime: (v: string) => void;
  what: string;
  apiError?: string;
}) {
  const { org } = useSession();
  const error = isWhen(day, time) ? apiError : 'A day as YYYY-MM-DD and a time as HH:MM';
  return (
    <Group grow align="flex-start">
      <TextInput
        label={`${what}: day`}
        description={`Empty: now. In ${org.timeZone}, e.g. ${dayIn(org.timeZone)}`}
        placeholder="YYYY-MM-DD"
        value={day}
        onChange={(e) => setDay(e.currentTarget.value)}
        error={error}
        data-testid="when-day"
      />
      <TextInput
        label={`${what}: time`}
        description="HH:MM, 24-hour"
        placeholder="00:00"
        value={time}
        onChange={(e) => setTime(e.currentTarget.value)}
        data-testid="when-time"
      />
    </Group>
  );
}

export function CreatePriceModal({
  upstreams,
  rules,
  onClose,
  onCreated,
}: {
  upstreams: Upstream[];
  rules: PriceRule[];
  onClose: () => void;
  onCreated: () => void;
}) {
  const { org, currency } = useSession();
  const [upstreamId, setUpstreamId] = useState<string | null>(upstreams[0]?.id ?? null);
  // Empty, not `*`: a pre-filled `*` turned a typed `read_graph` into `*read_graph`.
  const [pattern, setPattern] = useState('');
  const [tried, setTried] = useState(false);
  const tools = useLoad(
    () => answer(adminApi.GET('/v1/orgs/{orgId}/tools', { params: { path: { orgId: org.id } } })),
    [org.id],
  );
  const [perCall, setPerCall] = useState('');
  const [perToken, setPerToken] = useState('0');
  const [chargeFailed, setChargeFailed] = useState(false);
  const [day, setDay] = useState('');
  const [time, setTime] = useState('');
  const form = useFormSubmit(['upstreamId', 'toolPattern', 'perCallMicros', 'perOutputTokenMicros', 'effectiveFrom']);
  const callMicros = decimalToMicros(perCall);
  const tokenMicros = decimalToMicros(perToken);
  const whenOk = isWhen(day, time);

  const scopeUpstream = upstreamId && upstreamId !== 'ALL' ? upstreamId : null;
  const namespaceOf = new Map(upstreams.map((u) => [u.id, u.namespace]));
  const typed = pattern.trim();
  const matching =
    tools.state === 'ready' && typed
      ? tools.data.filter((t) => (!scopeUpstream || t.upstreamId === scopeUpstream) && globMatches(typed, t.name))
      : [];
  // The API supersedes the rule in force for the same upstream and pattern.
  const superseded = rules.find(
    (r) => r.state === 'IN_FORCE' && r.toolPattern === typed && (r.upstreamId ?? null) === scopeUpstream,
  );
  // Which rules price the matching tools now, and which of them the new rule would take over (the edge's choice).
  const effect =
    tools.state === 'ready' && typed
      ? takeover(
          rules,
          {
            id: 'proposed',
            orgId: '',
            upstreamId: scopeUpstream,
            toolPattern: typed,
            perCallMicros: 0,
            perOutputTokenMicros: 0,
            acceptReportedCost: false,
            reportedCostCapMicros: 0,
            chargeFailedCalls: false,
            effectiveFrom: new Date(8.64e15).toISOString(), // later than any rule: it wins ties, as the newest does
            effectiveUntil: null,
            createdAt: new Date().toISOString(),
            state: 'IN_FORCE',
          },
          tools.data,
        )
      : null;
  const ruleName = (r: PriceRule) =>
    `${r.upstreamId ? (namespaceOf.get(r.upstreamId) ?? '?') : 'every upstream'} / ${r.toolPattern}`;
  const names = (list: CatalogTool[]) =>
    `${list
      .slice(0, 4)
      .map((t) => t.exposedName)
      .join(', ')}${list.length > 4 ? `, and ${list.length - 4} more` : ''}`;

  const submit = form.onSubmit(async () => {
    setTried(true);
    if (!typed) return;
    if (callMicros === null || tokenMicros === null || !whenOk) return;
    await answer(
      adminApi.POST('/v1/orgs/{orgId}/prices', {
        params: { path: { orgId: org.id } },
        body: {
          ...(upstreamId && upstreamId !== 'ALL' ? { upstreamId } : {}),
          toolPattern: pattern.trim(),
          perCallMicros: Number(callMicros),
          perOutputTokenMicros: Number(tokenMicros),
          chargeFailedCalls: chargeFailed,
          ...(day ? { effectiveFrom: instantOf(day, time, org.timeZone) } : {}),
        },
      }),
    );
    onCreated();
  });
  return (
    <FormModal title="New price rule" size="lg" onClose={onClose} onSubmit={submit}>
      <Select
        label="Upstream"
        data={[
          { value: 'ALL', label: 'Every upstream' },
          ...upstreams.map((u) => ({ value: u.id, label: u.namespace })),
        ]}
        value={upstreamId}
        onChange={setUpstreamId}
        allowDeselect={false}
        error={form.at('upstreamId')}
        data-testid="price-upstream"
      />
      <Autocomplete
        label="Tool pattern"
        description="A tool's name, or a glob over names: * for every tool, search_* for a family"
        placeholder="e.g. search_* or *"
        value={pattern}
        onChange={setPattern}
        data={[
          ...new Set(
            tools.state === 'ready'
              ? tools.data.filter((t) => !scopeUpstream || t.upstreamId === scopeUpstream).map((t) => t.name)
              : [],
          ),
        ]}
        limit={20}
        error={tried && !typed ? 'Type a pattern: a tool name, or * for every tool' : form.at('toolPattern')}
        data-testid="price-pattern"
      />
      {typed && (
        <Text size="sm" c="dimmed" data-testid="price-preview" aria-live="polite">
          {tools.state !== 'ready'
            ? 'Looking up the catalog…'
            : matching.length === 0
              ? 'Matches no tool in the catalog yet.'
              : `Matches ${matching.length} tool${matching.length === 1 ? '' : 's'}: ${matching
                  .slice(0, 8)
                  .map((t) => t.exposedName)
                  .join(', ')}${matching.length > 8 ? ', …' : ''}.`}
          {superseded &&
            ` Supersedes the rule in force since ${formatTimestamp(superseded.effectiveFrom, org.timeZone)}.`}
        </Text>
      )}
      {effect && (effect.from.length > 0 || effect.keep.length > 0) && (
        <Stack gap={2} data-testid="price-takeover" aria-live="polite">
          {effect.from.map((f) => (
            <Text size="sm" key={f.rule?.id ?? 'none'} data-testid="price-takes-from">
              {f.rule ? (
                <>
                  Takes over from <b>{ruleName(f.rule)}</b> (<Money micros={f.rule.perCallMicros} /> a call)
                </>
              ) : (
                'Prices for the first time'
              )}
              : {names(f.tools)}.
            </Text>
          ))}
          {effect.keep.map((k) => (
            <Text size="sm" c="dimmed" key={k.rule.id} data-testid="price-keeps">
              Stays on the more specific <b>{ruleName(k.rule)}</b>: {names(k.tools)}.
            </Text>
          ))}
        </Stack>
      )}
      <Group grow align="flex-start">
        <TextInput
          label={`Per call (${currency})`}
          description="Up to six decimals"
          value={perCall}
          onChange={(e) => setPerCall(e.currentTarget.value)}
          error={perCall && callMicros === null ? 'An amount such as 0.0025' : form.at('perCallMicros')}
          data-testid="price-per-call"
        />
        <TextInput
          label={`Per output token (${currency})`}
          description={
            tokenMicros !== null && tokenMicros > 0n ? (
              <span data-testid="price-per-token-scaled">
                = <Money micros={tokenMicros * 1_000n} /> per 1K · <Money micros={tokenMicros * 1_000_000n} /> per 1M
                tokens
              </span>
            ) : (
              'e.g. 0.000003'
            )
          }
          value={perToken}
          onChange={(e) => setPerToken(e.currentTarget.value)}
          error={tokenMicros === null ? 'An amount such as 0.000003' : form.at('perOutputTokenMicros')}
        />
      </Group>
      <Switch
        label="Charge failed calls"
        checked={chargeFailed}
        onChange={(e) => setChargeFailed(e.currentTarget.checked)}
      />
      <WhenFields
        day={day}
        time={time}
        setDay={setDay}
        setTime={setTime}
        what="Effective from"
        apiError={form.at('effectiveFrom')}
      />
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Add rule"
        submitTestId="price-submit"
        busy={form.busy}
        disabled={callMicros === null || !perCall || tokenMicros === null || !whenOk}
        onCancel={onClose}
      />
    </FormModal>
  );
}
