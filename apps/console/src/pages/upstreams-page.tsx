import { Tabs } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { CatalogTool, PriceRule } from '../api/governance-types';
import { ErrorState, LoadingState } from '../components/page-states';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { type UpstreamDetail } from './upstream-form-modals';
import { ReviewQueue } from './tool-review-queue';
import { UpstreamsList } from './upstreams-list';

export interface CatalogData {
  upstreams: UpstreamDetail[];
  tools: CatalogTool[];
  prices: PriceRule[];
}

export function UpstreamsPage() {
  const { org } = useSession();
  const data = useLoad<CatalogData>(async () => {
    // Upstreams first: a sync writes its tools and lastSyncAt in one transaction, so a sync the
    // list shows (which ends the page's watch) has its tools in the tools read that follows.
    const upstreams = await answer(adminApi.GET('/v1/orgs/{orgId}/upstreams', { params: { path: { orgId: org.id } } }));
    const [tools, prices] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/tools', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/prices/history', { params: { path: { orgId: org.id } } })),
    ]);
    upstreams.sort((a, b) => a.namespace.localeCompare(b.namespace));
    return { upstreams, tools, prices };
  }, [org.id]);
  const [tab, setTab] = useState<string | null>('upstreams');

  if (data.state === 'loading') return <LoadingState label="Loading upstreams and tools…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="upstreams and tools" onRetry={data.reload} />;
  const pending = data.data.tools.filter((t) => t.reviewStatus === 'PENDING').length;

  return (
    <Tabs value={tab} onChange={setTab}>
      <Tabs.List>
        <Tabs.Tab value="upstreams">Upstreams ({data.data.upstreams.length})</Tabs.Tab>
        <Tabs.Tab value="review" data-testid="review-tab">
          Review queue ({pending})
        </Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="upstreams" pt="md">
        <UpstreamsList data={data.data} reload={data.reload} />
      </Tabs.Panel>
      <Tabs.Panel value="review" pt="md">
        <ReviewQueue data={data.data} reload={data.reload} />
      </Tabs.Panel>
    </Tabs>
  );
}
