import { Button, Group, Text } from '@mantine/core';
import { useEffect, useState } from 'react';

/**
 * "Updated 12 s ago" beside a Refresh button: how fresh the figures on screen are. `stamp` is the
 * loaded answer; a new one (a reload, a new range) restarts the count.
 */
export function UpdatedAgo({ stamp, onRefresh, testId }: { stamp: unknown; onRefresh: () => void; testId: string }) {
  const [at, setAt] = useState(() => Date.now());
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setAt(Date.now());
    setNow(Date.now());
  }, [stamp]);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const seconds = Math.max(0, Math.floor((now - at) / 1000));
  const age = seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${Math.floor(seconds / 60)} min` : 'over an hour';
  return (
    <Group gap="xs" data-testid={testId}>
      <Text size="sm" c="dimmed" data-testid={`${testId}-age`}>
        Updated {age} ago
      </Text>
      <Button size="compact-sm" variant="default" onClick={onRefresh}>
        Refresh
      </Button>
    </Group>
  );
}
