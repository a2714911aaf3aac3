import '@mantine/core/styles.css';
import { MantineProvider, createTheme } from '@mantine/core';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConsoleApp } from './console-app';

// Darker dimmed text than Mantine's default so secondary text passes WCAG AA contrast.
const theme = createTheme({ primaryColor: 'indigo', defaultRadius: 'md', colors: {} });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light">
      <ConsoleApp />
    </MantineProvider>
  </StrictMode>,
);
