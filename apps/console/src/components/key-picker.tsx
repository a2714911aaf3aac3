import { Select } from '@mantine/core';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import { keyLabel, useKeySearch } from './use-key-search';
import type { Key } from '../api/admin-types';
import { useSession } from '../session';

/**
 * A key filter that asks the API for the keys matching what is typed (`GET …/keys/page?search=…&limit=20`,
 * revoked and expired keys included: their calls are still in the log) instead of loading every key of the
 * org (10,000 on the bench). The API matches name, prefix, tag, OAuth client, team and owner, and scopes the
 * answer to the caller's reach. A key chosen by a link is named by `GET …/keys/:id`.
 */
export function KeyPicker({
  value,
  onChange,
  testId,
  w,
  live = false,
  placeholder = 'Any key (type to search)',
  error,
}: {
  value: string | null;
  /** The chosen key's id, and the key itself when it came from a search (its team and owner). */
  onChange: (keyId: string | null, key?: Key) => void;
  testId?: string;
  w?: number;
  /** Only usable keys (a new budget's target); by default revoked and expired ones too, for filtering calls. */
  live?: boolean;
  placeholder?: string;
  error?: ReactNode;
}) {
  const { org } = useSession();
  const [chosen, setChosen] = useState<{ value: string; label: string } | null>(null);
  const { search, setSearch, found, asked, open } = useKeySearch({ inactive: !live, notASearch: chosen?.label });

  // The chosen key's name, when the page opened on a link naming only its id.
  useEffect(() => {
    if (!value || chosen?.value === value) return;
    let current = true;
    answer(adminApi.GET('/v1/orgs/{orgId}/keys/{keyId}', { params: { path: { orgId: org.id, keyId: value } } })).then(
      (k) => current && setChosen({ value: k.id, label: keyLabel(k) }),
      () => current && setChosen({ value, label: value }),
    );
    return () => {
      current = false;
    };
  }, [org.id, value]);

  const data = useMemo(() => {
    const options = found.map((k) => ({ value: k.id, label: keyLabel(k) }));
    return chosen && !options.some((o) => o.value === chosen.value) ? [chosen, ...options] : options;
  }, [chosen, found]);
  return (
    <Select
      label="Key"
      placeholder={placeholder}
      clearable
      searchable
      // The API has matched already (by team and owner too, which the label does not show).
      filter={({ options }) => options}
      data={data}
      value={value}
      searchValue={search}
      onSearchChange={setSearch}
      onDropdownOpen={open}
      onChange={(id) => {
        setChosen(data.find((o) => o.value === id) ?? null);
        onChange(
          id,
          found.find((k) => k.id === id),
        );
      }}
      error={error}
      nothingFoundMessage={asked ? 'No key matches' : undefined}
      data-testid={testId}
      w={w}
    />
  );
}
