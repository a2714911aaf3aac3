import {
  AppShell,
  Badge,
  Burger,
  Button,
  Group,
  NavLink,
  Select,
  Stack,
  Text,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useCallback, useEffect, useMemo, useState } from 'react';
import {
  ApiError,
  adminApi,
  answer,
  setCsrfToken,
  setUnauthorizedHandler,
  signInApi,
  storeToken,
  storedToken,
} from './api/admin-client';
import type { Me, Org } from './api/admin-types';
import { ErrorState, LoadingState } from './components/page-states';
import { ROLE_LABELS, pagesFor } from './lib/roles';
import { PAGE_PATHS, PageId, navigate, pageOf, usePathname } from './lib/router';
import { useLoad } from './lib/use-load';
import { AlertsPage } from './pages/alerts-page';
import { AuditPage } from './pages/audit-page';
import { ConnectionsPage } from './pages/connections-page';
import { BudgetsPage } from './pages/budgets-page';
import { CallsPage } from './pages/calls-page';
import { KeysPage } from './pages/keys-page';
import { OverviewPage } from './pages/overview-page';
import { PeoplePage } from './pages/people-page';
import { PricesPage } from './pages/prices-page';
import { SettingsPage } from './pages/settings-page';
import { PoliciesPage } from './pages/policies-page';
import { SignInPage } from './pages/sign-in-page';
import { SpendExplorerPage } from './pages/spend-explorer-page';
import { TrailPage } from './pages/trail-page';
import { UpstreamsPage } from './pages/upstreams-page';
import { Session, SessionContext } from './session';

const PAGE_TITLES: Record<PageId, string> = {
  overview: 'Overview',
  explorer: 'Spend explorer',
  calls: 'Calls',
  trail: 'Agent trail',
  keys: 'Keys',
  budgets: 'Budgets',
  upstreams: 'Upstreams and tools',
  prices: 'Prices',
  policies: 'Policies',
  audit: 'Audit log',
  alerts: 'Alerts',
  connections: 'My connections',
  people: 'Teams and people',
  settings: 'Organisation settings',
};

const BADGE_MEANINGS: Partial<Record<PageId, string>> = {
  upstreams: ' waiting for review',
  alerts: ' failing webhook deliveries',
};

export function ConsoleApp() {
  const [token, setToken] = useState(storedToken());
  // Bumped on sign-in and sign-out: the identity is asked again (cookie or token).
  const [round, setRound] = useState(0);
  const signedOut = useCallback(() => {
    storeToken(null);
    setCsrfToken(null);
    setToken(null);
    setRound((r) => r + 1);
  }, []);
  useEffect(() => setUnauthorizedHandler(signedOut), [signedOut]);
  return (
    <SignedIn
      key={`${token ?? 'cookie'}:${round}`}
      onSignedOut={signedOut}
      onSignedIn={(t) => {
        storeToken(t);
        setToken(t);
      }}
    />
  );
}

interface Identity {
  me: Me | null;
  orgs: Org[];
}

/**
 * Who is signed in: GET /v1/auth/session answers for the SSO cookie or the stored token; 401 means
 * nobody. The organisations are asked at the same time (a read needs no CSRF token): one round trip
 * before every page's first data, not two.
 */
async function loadIdentity(): Promise<Identity> {
  const session = answer(signInApi.GET('/v1/auth/session'));
  // A 401 here is the session's own (read below once the session is known).
  const orgs = answer(signInApi.GET('/v1/orgs'));
  orgs.catch(() => undefined);
  try {
    const me = await session;
    setCsrfToken(me.csrfToken);
    return { me, orgs: await orgs };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return { me: null, orgs: [] };
    throw err;
  }
}

function SignedIn({ onSignedOut, onSignedIn }: { onSignedOut: () => void; onSignedIn: (token: string) => void }) {
  const identity = useLoad<Identity>(loadIdentity, []);
  const [chosenOrgId, setChosenOrgId] = useState<string | null>(null);
  const signOut = useCallback(async () => {
    // A cookie session is ended at the server (every replica); a token is just forgotten.
    if (identity.state === 'ready' && identity.data.me && identity.data.me.via !== 'bearer')
      await answer(adminApi.POST('/v1/auth/logout')).catch(() => undefined);
    onSignedOut();
  }, [identity, onSignedOut]);

  if (identity.state === 'loading') return <LoadingState label="Checking your sign-in…" />;
  if (identity.state === 'error') {
    return (
      <Stack p="xl" maw={640} mx="auto" component="main">
        <ErrorState error={identity.error} what="your identity" onRetry={identity.reload} />
        <Button variant="subtle" onClick={signOut}>
          Sign out
        </Button>
      </Stack>
    );
  }
  const { me, orgs } = identity.data;
  if (!me) return <SignInPage onSignedIn={onSignedIn} />;
  const org = orgs.find((o) => o.id === (chosenOrgId ?? me.orgId)) ?? orgs[0];
  if (!org) {
    return (
      <Stack p="xl" maw={640} mx="auto" component="main">
        <ErrorState
          error={
            new ApiError(404, 'There is no organisation to show yet. Create one through the admin API (POST /v1/orgs).')
          }
          what="an organisation"
        />
        <Button variant="subtle" onClick={signOut}>
          Sign out
        </Button>
      </Stack>
    );
  }
  return (
    <Shell session={{ me, org, currency: org.currency ?? 'USD', signOut }} orgs={orgs} onChooseOrg={setChosenOrgId} />
  );
}

function Shell({ session, orgs, onChooseOrg }: { session: Session; orgs: Org[]; onChooseOrg: (id: string) => void }) {
  const pathname = usePathname();
  const allowed = pagesFor(session.me.role);
  const asked = pageOf(pathname);
  const page: PageId = asked && allowed.includes(asked) ? asked : allowed[0];
  // What waits for someone: tools held for review, alerts whose webhook delivery is failing (looked at again on each page change).
  const attention = useLoad(async () => {
    const path = { orgId: session.org.id };
    const [pending, failing] = await Promise.all([
      allowed.includes('upstreams') && session.me.role !== 'TEAM_ADMIN'
        ? answer(adminApi.GET('/v1/orgs/{orgId}/tools', { params: { path, query: { reviewStatus: 'PENDING' } } })).then(
            (l) => l.length,
            () => 0,
          )
        : 0,
      allowed.includes('alerts')
        ? answer(adminApi.GET('/v1/orgs/{orgId}/alerts', { params: { path, query: { limit: 100 } } })).then(
            (l) => l.filter((a) => !a.deliveredAt && a.lastError).length,
            () => 0,
          )
        : 0,
    ]);
    return { upstreams: pending, alerts: failing } as Partial<Record<PageId, number>>;
  }, [session.org.id, page]);
  const badges = attention.state === 'ready' ? attention.data : {};
  // On a phone the navigation is a drawer under the header: closed by default, closed again on each page change.
  const [navOpen, nav] = useDisclosure(false);
  useEffect(() => {
    document.title = `${PAGE_TITLES[page]} · Tollgate console`;
    nav.close();
  }, [page]);
  const who =
    session.me.user?.name ?? session.me.user?.email ?? (session.me.platformAdmin ? 'Platform admin' : 'Admin token');
  const content = useMemo(() => {
    if (page === 'overview') return <OverviewPage key={session.org.id} />;
    if (page === 'explorer') return <SpendExplorerPage key={session.org.id} />;
    if (page === 'calls') return <CallsPage key={session.org.id} />;
    if (page === 'trail') return <TrailPage key={session.org.id} />;
    if (page === 'policies') return <PoliciesPage key={session.org.id} />;
    if (page === 'audit') return <AuditPage key={session.org.id} />;
    if (page === 'alerts') return <AlertsPage key={session.org.id} />;
    if (page === 'connections') return <ConnectionsPage key={session.org.id} />;
    if (page === 'budgets') return <BudgetsPage key={session.org.id} />;
    if (page === 'upstreams') return <UpstreamsPage key={session.org.id} />;
    if (page === 'prices') return <PricesPage key={session.org.id} />;
    if (page === 'people') return <PeoplePage key={session.org.id} />;
    if (page === 'settings') return <SettingsPage key={session.org.id} />;
    return <KeysPage key={session.org.id} />;
  }, [page, session.org.id]);

  return (
    <SessionContext.Provider value={session}>
      <a className="skip-link" href="#main-content">
        Skip to content
      </a>
      <AppShell
        header={{ height: 56 }}
        navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !navOpen } }}
        padding={{ base: 'sm', sm: 'lg' }}
      >
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between" wrap="nowrap" gap="xs">
            <Group gap="sm" wrap="nowrap" miw={0}>
              <Burger
                opened={navOpen}
                onClick={nav.toggle}
                hiddenFrom="sm"
                size="sm"
                aria-label={navOpen ? 'Close navigation' : 'Open navigation'}
                aria-expanded={navOpen}
                aria-controls="console-navigation"
              />
              <Text fw={700} component="span">
                Tollgate
              </Text>
              {orgs.length > 1 ? (
                <Select
                  aria-label="Organisation"
                  size="xs"
                  data={orgs.map((o) => ({ value: o.id, label: o.name }))}
                  value={session.org.id}
                  onChange={(v) => v && onChooseOrg(v)}
                  allowDeselect={false}
                />
              ) : (
                <Text component="span" c="dimmed" truncate="end" title={session.org.name}>
                  {session.org.name}
                </Text>
              )}
            </Group>
            <Group gap="sm" wrap="nowrap">
              <Text size="sm" component="span" data-testid="signed-in-as" visibleFrom="md">
                {who}
              </Text>
              <Badge variant="light" color="indigo" data-testid="role-badge">
                {ROLE_LABELS[session.me.role]}
              </Badge>
              <Button size="xs" variant="default" onClick={() => void session.signOut()}>
                Sign out
              </Button>
            </Group>
          </Group>
        </AppShell.Header>
        {/* AppShell.Navbar is the one <nav> landmark (a second one inside it was a duplicate). */}
        <AppShell.Navbar p="xs" aria-label="Console pages" id="console-navigation" data-open={navOpen || undefined}>
          {allowed.map((id) => (
            <NavLink
              key={id}
              href={PAGE_PATHS[id]}
              label={PAGE_TITLES[id]}
              rightSection={
                badges[id] ? (
                  <Badge size="sm" color="red.9" data-testid={`nav-badge-${id}`}>
                    {badges[id]}
                    <VisuallyHidden>{BADGE_MEANINGS[id]}</VisuallyHidden>
                  </Badge>
                ) : undefined
              }
              active={id === page}
              aria-current={id === page ? 'page' : undefined}
              onClick={(e) => {
                e.preventDefault();
                navigate(PAGE_PATHS[id]);
              }}
            />
          ))}
        </AppShell.Navbar>
        <AppShell.Main id="main-content" tabIndex={-1}>
          <Stack gap="lg" maw={1200}>
            <Title order={1} size="h2" id="page-title" tabIndex={-1}>
              {PAGE_TITLES[page]}
            </Title>
            {content}
          </Stack>
        </AppShell.Main>
      </AppShell>
    </SessionContext.Provider>
  );
}
