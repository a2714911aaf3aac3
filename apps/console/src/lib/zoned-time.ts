/** Wall-clock times in the org's time zone to UTC instants, for the API's ISO timestamps. */

function offsetMs(timeZone: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(at));
  const v = (t: string) => Number(parts.find((p) => p.type === t)!.value);
  return (
    Date.UTC(v('year'), v('month') - 1, v('day'), v('hour'), v('minute'), v('second')) - Math.floor(at / 1000) * 1000
  );
}

/** `2026-12-01` + `09:30` in `Europe/Paris` -> the UTC instant; twice round, so DST edges settle. */
export function zonedToUtc(day: string, time: string, timeZone: string): Date {
  const [y, m, d] = day.split('-').map(Number);
  const [hh, mm] = time.split(':').map(Number);
  const wall = Date.UTC(y, m - 1, d, hh, mm);
  let guess = wall - offsetMs(timeZone, wall);
  guess = wall - offsetMs(timeZone, guess);
  return new Date(guess);
}
