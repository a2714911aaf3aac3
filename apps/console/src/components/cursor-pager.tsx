import { Button, Group, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import type { CursorPages } from '../lib/use-cursor-pages';

/**
 * The pager under a keyset-paged table: what the page shows (announced as it changes) and the
 * buttons to the previous and the next page, named as the list runs (Newer/Older, Earlier/Later).
 */
export function CursorPager<P extends { nextCursor: string | null }>({
  pages,
  summary,
  previousLabel,
  nextLabel,
  testIdPrefix,
}: {
  pages: CursorPages<P>;
  summary: ReactNode;
  previousLabel: string;
  nextLabel: string;
  testIdPrefix: string;
}) {
  return (
    <Group justify="space-between">
      <Text size="sm" c="dimmed" data-testid={`${testIdPrefix}-summary`} aria-live="polite">
        {pages.page.state === 'ready' ? summary : ''}
      </Text>
      <Group gap="xs">
        <Button
          variant="default"
          disabled={!pages.hasPrevious}
          onClick={pages.previous}
          data-testid={`${testIdPrefix}-${previousLabel.toLowerCase()}`}
        >
          {previousLabel}
        </Button>
        <Button
          variant="default"
          disabled={!pages.hasNext}
          onClick={pages.next}
          data-testid={`${testIdPrefix}-${nextLabel.toLowerCase()}`}
        >
          {nextLabel}
        </Button>
      </Group>
    </Group>
  );
}
