import { Group, Select, TextInput } from '@mantine/core';
import { useEffect, useState } from 'react';
import { DayRange, RANGE_PRESETS, RangePreset, isTypedDay, presetOf, presetRange } from '../lib/date-ranges';

/** How long typing pauses before a typed day is taken (one report per pause, not per keystroke). */
const TYPING_PAUSE_MS = 500;

/**
 * One range picker for every page: a preset, or two days typed or picked. A typed day is taken
 * only once it is a whole, real day in a sane span and typing has paused: half a year
 * (`0002-10-27`) is never sent, and a backwards range is said at the field instead of asked.
 */
export function RangePicker({
  range,
  today,
  timeZone,
  onChange,
  testIdPrefix,
}: {
  range: DayRange;
  today: string;
  timeZone: string;
  onChange: (range: DayRange) => void;
  testIdPrefix: string;
}) {
  const [draft, setDraft] = useState(range);
  // A new range from outside (a preset, a link) replaces what is typed.
  useEffect(() => setDraft(range), [range.from, range.to]);
  const fromOk = isTypedDay(draft.from);
  const toOk = isTypedDay(draft.to);
  const backwards = fromOk && toOk && draft.from > draft.to;
  useEffect(() => {
    if (!fromOk || !toOk || backwards || (draft.from === range.from && draft.to === range.to)) return;
    const timer = setTimeout(() => onChange(draft), TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [draft.from, draft.to, fromOk, toOk, backwards]);
  const preset = presetOf(range, today);

  return (
    <Group align="flex-start" gap="sm">
      <Select
        label="Range"
        data={[
          ...RANGE_PRESETS.map((p) => ({ value: p.id, label: p.label })),
          { value: 'custom', label: 'Custom days' },
        ]}
        value={preset ?? 'custom'}
        onChange={(v) => v && v !== 'custom' && onChange(presetRange(v as RangePreset, today))}
        allowDeselect={false}
        w={170}
        data-testid={`${testIdPrefix}-preset`}
      />
      <TextInput
        type="date"
        label="From"
        description={`Days in ${timeZone}`}
        value={draft.from}
        max={draft.to}
        onChange={(e) => setDraft({ ...draft, from: e.currentTarget.value })}
        error={
          !fromOk && draft.from ? 'A whole day, e.g. 2026-11-01' : backwards ? 'The start is after the end' : undefined
        }
        data-testid={`${testIdPrefix}-from`}
      />
      <TextInput
        type="date"
        label="To"
        description="Inclusive"
        value={draft.to}
        min={draft.from}
        onChange={(e) => setDraft({ ...draft, to: e.currentTarget.value })}
        error={!toOk && draft.to ? 'A whole day, e.g. 2026-11-30' : undefined}
        data-testid={`${testIdPrefix}-to`}
      />
    </Group>
  );
}
