import { Code, Group, Select, TagsInput, Text, TextInput } from '@mantine/core';
import { ReactNode, useState } from 'react';
import { adminApi, answer, toApiError } from '../api/admin-client';
import { BUDGET_PERIODS, type Budget, type BudgetPeriod } from '../api/governance-types';
import { oneOf } from '../lib/choice';
import type { Team, User } from '../api/admin-types';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { SecretShownOnce } from '../components/secret-shown-once';
import { useFormSubmit } from '../lib/form-submit';
import { decimalToMicros } from '../lib/money-input';
import { useLoad } from '../lib/use-load';
import { zonedToUtc } from '../lib/zoned-time';
import { useSession } from '../session';

const KEY_BUDGET_PERIODS = [
  { value: 'DAY', label: 'Day' },
  { value: 'WEEK', label: 'Week' },
  { value: 'MONTH', label: 'Month' },
  { value: 'QUARTER', label: 'Quarter' },
  { value: 'TOTAL', label: 'Ever (never resets)' },
];

/** Issue a key: its team and owner, and optionally its tags, expiry and its own budget, in one form. */
export function IssueKeyModal({
  teams,
  users,
  onClose,
  onIssued,
}: {
  teams: Team[];
  users: User[];
  onClose: () => void;
  onIssued: () => void;
}) {
  const { me, org, currency } = useSession();
  // Members issue keys for themselves; team admins within their team.
  const fixedTeam = me.role === 'MEMBER' || me.role === 'TEAM_ADMIN' ? me.teamId : null;
  const fixedUser = me.role === 'MEMBER' ? (me.user?.id ?? null) : null;
  const [name, setName] = useState('');
  const [teamId, setTeamId] = useState<string | null>(fixedTeam ?? (teams.length === 1 ? teams[0].id : null));
  const [userId, setUserId] = useState<string | null>(fixedUser);
  const [tags, setTags] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [budget, setBudget] = useState<{ amount: string; period: BudgetPeriod; mode: Budget['mode'] }>({
    amount: '',
    period: 'MONTH',
    mode: 'HARD',
  });
  const form = useFormSubmit(['name', 'teamId', 'userId', 'tags', 'expiresAt']);
  const [secret, setSecret] = useState<string | null>(null);
  // The key is issued even if its budget is then refused (a team admin above the team's): say so with the secret.
  const [budgetProblem, setBudgetProblem] = useState<string | null>(null);
  const budgetMicros = budget.amount.trim() ? decimalToMicros(budget.amount) : null;
  const badBudget =
    budget.amount.trim() !== '' && (budgetMicros === null || budgetMicros > BigInt(Number.MAX_SAFE_INTEGER));

  const members = useLoad(
    async () =>
      teamId
        ? answer(
            adminApi.GET('/v1/orgs/{orgId}/teams/{teamId}/members', { params: { path: { orgId: org.id, teamId } } }),
          )
        : [],
    [org.id, teamId],
  );
  const memberOptions =
    members.state === 'ready'
      ? members.data.map((m) => ({
          value: m.userId,
          label: (() => {
            const u = users.find((x) => x.id === m.userId);
            return u ? (u.name ? `${u.name} (${u.email})` : u.email) : m.userId;
          })(),
        }))
      : [];

  const submit = form.onSubmit(async () => {
    if (badBudget) return;
    if (!teamId || !userId) return;
    const issued = await answer(
      adminApi.POST('/v1/orgs/{orgId}/keys', {
        params: { path: { orgId: org.id } },
        body: {
          name: name.trim(),
          teamId,
          userId,
          ...(tags.length ? { tags } : {}),
          // The start of that day in the org's zone, as every other date of the console.
          ...(expires ? { expiresAt: zonedToUtc(expires, '00:00', org.timeZone).toISOString() } : {}),
        },
      }),
    );
    if (budgetMicros !== null) {
      try {
        await answer(
          adminApi.PUT('/v1/orgs/{orgId}/keys/{keyId}/budget', {
            params: { path: { orgId: org.id, keyId: issued.key.id } },
            body: { period: budget.period, mode: budget.mode, limitMicros: Number(budgetMicros) },
          }),
        );
      } catch (err) {
        setBudgetProblem(toApiError(err).message);
      }
    }
    setSecret(issued.secret);
    onIssued();
  });

  if (secret) {
    return (
      <KeySecret title="Key issued" secret={secret} onClose={onClose}>
        {budgetProblem && (
          <Text size="sm" c="var(--tg-danger)" role="alert" data-testid="issue-key-budget-problem">
            The key was issued without its budget: {budgetProblem} Set one from the key&rsquo;s Settings.
          </Text>
        )}
      </KeySecret>
    );
  }

  return (
    <FormModal title="Issue a key" onClose={onClose} onSubmit={submit}>
      <TextInput
        label="Name"
        description="What runs with it, e.g. claude-code-laptop"
        required
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={form.at('name')}
        data-testid="key-name"
      />
      <Select
        label="Team"
        description="The team the key spends for"
        required
        data={teams.map((t) => ({ value: t.id, label: t.name }))}
        value={teamId}
        onChange={(v) => {
          setTeamId(v);
          if (!fixedUser) setUserId(null);
        }}
        disabled={!!fixedTeam}
        error={
          form.at('teamId') ??
          (teams.length === 0 ? 'No team yet: an org admin creates one on Teams and people, then adds you' : undefined)
        }
        data-testid="key-team"
      />
      <Select
        label="Owner"
        description="A member of the team"
        required
        data={fixedUser ? [{ value: fixedUser, label: 'Me' }] : memberOptions}
        value={userId}
        onChange={setUserId}
        disabled={!!fixedUser || !teamId}
        nothingFoundMessage="No members in this team"
        error={form.at('userId')}
        data-testid="key-owner"
      />
      <TagsInput
        label="Tags"
        description="Optional; reports group and filter by them, e.g. project:atlas (Enter adds one)"
        value={tags}
        onChange={setTags}
        error={form.at('tags')}
        data-testid="issue-key-tags"
      />
      <TextInput
        type="date"
        label="Expires on"
        description={`Optional; from the start of that day in ${org.timeZone}`}
        value={expires}
        onChange={(e) => setExpires(e.currentTarget.value)}
        error={form.at('expiresAt')}
        data-testid="issue-key-expiry"
      />
      <Group align="flex-start" gap="xs" grow role="group" aria-label="Budget of the key (optional)">
        <TextInput
          label={`Budget (${currency})`}
          description="Optional; its own limit"
          inputMode="decimal"
          value={budget.amount}
          onChange={(e) => setBudget({ ...budget, amount: e.currentTarget.value })}
          error={badBudget ? `An amount in ${currency}, e.g. 25 or 0.50` : undefined}
          data-testid="issue-key-budget"
        />
        <Select
          label="Per"
          description="Calendar period"
          data={KEY_BUDGET_PERIODS}
          value={budget.period}
          onChange={(v) => setBudget({ ...budget, period: oneOf(BUDGET_PERIODS, v, 'MONTH') })}
          allowDeselect={false}
          data-testid="issue-key-budget-period"
        />
        <Select
          label="Mode"
          description="At the limit"
          data={[
            { value: 'HARD', label: 'Hard: refuse calls' },
            { value: 'SOFT', label: 'Soft: alert only' },
          ]}
          value={budget.mode}
          onChange={(v) => setBudget({ ...budget, mode: v === 'SOFT' ? 'SOFT' : 'HARD' })}
          allowDeselect={false}
          data-testid="issue-key-budget-mode"
        />
      </Group>
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Issue key"
        submitTestId="key-submit"
        busy={form.busy}
        disabled={!name.trim() || !teamId || !userId || badBudget}
        onCancel={onClose}
      />
    </FormModal>
  );
}

export function KeySecret({
  title,
  secret,
  onClose,
  children,
}: {
  title: string;
  secret: string;
  onClose: () => void;
  children?: ReactNode;
}) {
  return (
    <SecretShownOnce
      title={title}
      warning="Copy the key now"
      secret={secret}
      onClose={onClose}
      testId="issued-secret"
      copyTestId="copy-secret"
      after={
        <>
          <Text size="sm">
            Agents send it as <Code>Authorization: Bearer …</Code> to the edge.
          </Text>
          {children}
        </>
      }
    >
      This is the only time the secret is shown. Tollgate keeps only a hash of it.
    </SecretShownOnce>
  );
}
