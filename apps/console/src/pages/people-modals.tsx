import { Checkbox, Select, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { Key, Team } from '../api/admin-types';
import { ConfirmModal } from '../components/confirm-modal';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { useFormSubmit } from '../lib/form-submit';
import { useSession } from '../session';
import type { Person } from './people-page';

export function TeamNameModal({
  team,
  onClose,
  onSaved,
}: {
  team?: Team;
  onClose: () => void;
  onSaved: (m: string) => void;
}) {
  const { org } = useSession();
  const [name, setName] = useState(team?.name ?? '');
  const form = useFormSubmit(['name']);
  const submit = form.onSubmit(async () => {
    const path = { orgId: org.id };
    const body = { name: name.trim() };
    if (team)
      await answer(
        adminApi.PATCH('/v1/orgs/{orgId}/teams/{teamId}', { params: { path: { ...path, teamId: team.id } }, body }),
      );
    else await answer(adminApi.POST('/v1/orgs/{orgId}/teams', { params: { path }, body }));
    onSaved(team ? `Team renamed to ${name.trim()}.` : `Team ${name.trim()} created.`);
  });
  return (
    <FormModal
      title={team ? `Rename ${team.name}` : 'New team'}
      onClose={onClose}
      onSubmit={submit}
      onInput={form.onFormInput}
    >
      <TextInput
        label="Name"
        description="Unique in the organisation, e.g. platform-eng"
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={form.at('name')}
        data-testid="team-name"
        data-autofocus
      />
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel={team ? 'Rename team' : 'Create team'}
        submitTestId="team-submit"
        busy={form.busy}
        disabled={!name.trim()}
        onCancel={onClose}
      />
    </FormModal>
  );
}

export function PersonModal({ onClose, onSaved }: { onClose: () => void; onSaved: (m: string) => void }) {
  const { org } = useSession();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const form = useFormSubmit(['email', 'name']);
  const submit = form.onSubmit(async () => {
    await answer(
      adminApi.POST('/v1/orgs/{orgId}/users', {
        params: { path: { orgId: org.id } },
        body: { email: email.trim(), ...(name.trim() ? { name: name.trim() } : {}) },
      }),
    );
    onSaved(`${name.trim() || email.trim()} added; add them to a team so they can have keys.`);
  });
  return (
    <FormModal title="Add a person" onClose={onClose} onSubmit={submit} onInput={form.onFormInput}>
      <TextInput
        label="Work email"
        description="Single sign-on matches people by this address"
        type="email"
        value={email}
        onChange={(e) => setEmail(e.currentTarget.value)}
        error={form.at('email')}
        data-testid="person-email"
        data-autofocus
      />
      <TextInput
        label="Name"
        description="Optional"
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={form.at('name')}
        data-testid="person-name"
      />
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Add person"
        submitTestId="person-submit"
        busy={form.busy}
        disabled={!email.trim()}
        onCancel={onClose}
      />
    </FormModal>
  );
}

export function AddMemberModal({
  team,
  people,
  onClose,
  onSaved,
}: {
  team: Team;
  people: Person[];
  onClose: () => void;
  onSaved: (m: string) => void;
}) {
  const { org } = useSession();
  const [userId, setUserId] = useState<string | null>(null);
  const [isTeamAdmin, setTeamAdmin] = useState(false);
  const form = useFormSubmit(['userId', 'isTeamAdmin']);
  const submit = form.onSubmit(async () => {
    if (!userId) return;
    await answer(
      adminApi.POST('/v1/orgs/{orgId}/teams/{teamId}/members', {
        params: { path: { orgId: org.id, teamId: team.id } },
        body: { userId, isTeamAdmin },
      }),
    );
    const p = people.find((x) => x.id === userId);
    onSaved(`${p?.name ?? p?.email} joined ${team.name}${isTeamAdmin ? ' as its admin' : ''}.`);
  });
  return (
    <FormModal title={`Add a member to ${team.name}`} onClose={onClose} onSubmit={submit}>
      <Select
        label="Person"
        searchable
        data={people.map((p) => ({ value: p.id, label: p.name ? `${p.name} (${p.email})` : p.email }))}
        value={userId}
        onChange={setUserId}
        nothingFoundMessage="Everybody is in this team already"
        error={form.at('userId')}
        data-testid="member-person"
      />
      <Checkbox
        label="Team admin: issues and revokes the team's keys and reads its spend"
        checked={isTeamAdmin}
        onChange={(e) => setTeamAdmin(e.currentTarget.checked)}
        data-testid="member-team-admin"
      />
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Add member"
        submitTestId="member-submit"
        busy={form.busy}
        disabled={!userId}
        onCancel={onClose}
      />
    </FormModal>
  );
}

/** Offboarding in two steps: what it will revoke, then the API's account of what it did. */
export function OffboardModal({
  person,
  keys,
  teams,
  onClose,
  onDone,
}: {
  person: Person;
  /** Their active keys; null when the keys could not be listed. */
  keys: Key[] | null;
  teams: string[];
  onClose: () => void;
  onDone: (m: string) => void;
}) {
  const { org } = useSession();
  const who = person.name ?? person.email;
  return (
    <ConfirmModal
      title={`Offboard ${who}?`}
      confirmLabel="Offboard"
      testId="confirm-offboard"
      onClose={onClose}
      onConfirm={async () => {
        const r = await answer(
          adminApi.POST('/v1/orgs/{orgId}/users/{userId}/offboard', {
            params: { path: { orgId: org.id, userId: person.id } },
          }),
        );
        onDone(
          `${who} is offboarded: ${r.revokedKeyIds.length} key(s) and ${r.revokedAdminTokenIds.length} admin token(s) revoked, ${r.removedFromTeamIds.length} team(s) left.`,
        );
      }}
    >
      <Stack gap="xs" data-testid="offboard-preview">
        <Text size="sm">Every edge refuses them within a second. This revokes:</Text>
        <Text size="sm" component="ul" m={0}>
          <li>
            {keys === null
              ? 'every active key of theirs (the keys could not be listed here)'
              : keys.length === 0
                ? 'no active key'
                : `${keys.length} active key(s): ${keys.map((k) => k.name).join(', ')}`}
          </li>
          <li>{teams.length === 0 ? 'no team membership' : `membership of ${teams.join(', ')}`}</li>
          <li>their admin tokens and their accounts connected at upstreams</li>
        </Text>
        <Text size="sm" c="dimmed">
          Their budgets and past spend stay in the reports. Repeating it is harmless.
        </Text>
      </Stack>
    </ConfirmModal>
  );
}
