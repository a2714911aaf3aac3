import '@mantine/core/styles.css';
import './console.css';
import { CSSVariablesResolver, MantineProvider, createTheme } from '@mantine/core';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConsoleApp } from './console-app';

// Light or dark as the system is set (prefers-color-scheme).
// Shade 8 for filled and light variants, and darker error and dimmed text than Mantine's
// defaults: every text passes WCAG AA contrast (the browser test runs axe on each page).
const theme = createTheme({ primaryColor: 'indigo', primaryShade: 8, defaultRadius: 'md', autoContrast: true });
const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    '--mantine-color-dimmed': 'var(--mantine-color-gray-8)',
    '--mantine-color-placeholder': 'var(--mantine-color-gray-7)',
  },
  dark: {
    '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
    '--mantine-color-placeholder': 'var(--mantine-color-dark-2)',
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={cssVariables} defaultColorScheme="auto">
      <ConsoleApp />
    </MantineProvider>
  </StrictMode>,
);
