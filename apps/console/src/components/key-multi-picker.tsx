import { MultiSelect } from '@mantine/core';
import { useEffect, useMemo, useState } from 'react';
import { keysByIds } from '../lib/keys-by-ids';
import { useSession } from '../session';
import { keyLabel, useKeySearch } from './use-key-search';

/**
 * The explorer's filter of several keys, searching the API as one types (`GET …/keys/page?search=…&limit=20`,
 * revoked and expired keys included: their spend is in the report) instead of loading every key of the org;
 * the keys already chosen (by a link too) are named by one lookup of their ids.
 */
export function KeyMultiPicker({
  value,
  onChange,
  label,
  w,
}: {
  value: string[];
  onChange: (keyIds: string[]) => void;
  label: string;
  w?: number;
}) {
  const { org } = useSession();
  const { search, setSearch, found, asked, open } = useKeySearch({ inactive: true });
  const [named, setNamed] = useState<Map<string, string>>(new Map());

  // The chosen keys not named yet (a link names only ids): one lookup for them all.
  const unnamed = value.filter((id) => !named.has(id)).join(',');
  useEffect(() => {
    if (!unnamed) return;
    let current = true;
    const ids = unnamed.split(',');
    keysByIds(org.id, ids).then(
      (keys) =>
        current &&
        setNamed((m) => {
          const next = new Map(m);
          for (const id of ids) next.set(id, id); // a key out of reach or gone keeps its id
          for (const k of keys) next.set(k.id, keyLabel(k));
          return next;
        }),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [org.id, unnamed]);

  const data = useMemo(() => {
    const options = found.map((k) => ({ value: k.id, label: keyLabel(k) }));
    const shown = new Set(options.map((o) => o.value));
    return [
      ...value.filter((id) => !shown.has(id)).map((id) => ({ value: id, label: named.get(id) ?? id })),
      ...options,
    ];
  }, [found, value, named]);
  return (
    <MultiSelect
      label={label}
      placeholder={value.length ? undefined : 'Any key (type to search)'}
      clearable
      searchable
      // The API has matched already (by team and owner too, which the label does not show).
      filter={({ options }) => options}
      data={data}
      value={value}
      searchValue={search}
      onSearchChange={setSearch}
      onDropdownOpen={open}
      onChange={(ids) => {
        setNamed((m) => {
          const next = new Map(m);
          for (const o of data) if (ids.includes(o.value)) next.set(o.value, o.label);
          return next;
        });
        onChange(ids);
      }}
      nothingFoundMessage={asked ? 'No key matches' : undefined}
      data-testid="explorer-filter-keyId"
      w={w}
    />
  );
}
