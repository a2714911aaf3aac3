import { Modal, ModalProps } from '@mantine/core';
import { useEffect, useState } from 'react';

/**
 * Every dialog of the console. The pages mount a dialog while it is open and unmount it on close,
 * which skips Mantine's own focus return: this one remembers the element that had focus when it
 * opened (the opener) and gives focus back to it when it goes, or to the page's title if the opener
 * went too (e.g. the row of a deleted item), never to <body>.
 */
let lastOpener: Element | null = null;

export function ConsoleModal(props: Omit<ModalProps, 'opened'> & { opened?: boolean }) {
  // Read during the first render: focus is still on the opener, before the dialog traps it.
  const [opener] = useState(() => {
    const active = document.activeElement;
    // Opened from inside a dialog that is closing (e.g. "Key issued" after the issue form): its opener.
    lastOpener = active?.closest('[role=dialog]') ? lastOpener : active;
    return lastOpener;
  });
  useEffect(
    () => () => {
      // After the dialog's own teardown, which may move focus itself.
      setTimeout(() => {
        // Focus already somewhere real (e.g. the next dialog): leave it there.
        if (document.activeElement && document.activeElement !== document.body) return;
        if (opener instanceof HTMLElement && opener.isConnected && opener !== document.body) opener.focus();
        else document.getElementById('page-title')?.focus();
      }, 0);
    },
    [opener],
  );
  return <Modal opened closeButtonProps={{ 'aria-label': 'Close' }} {...props} />;
}
