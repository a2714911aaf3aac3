import { describe, expect, it } from 'vitest';
import { ExplorerView, NO_FILTERS, activeFilters, reportQuery, searchOfView, viewFromSearch } from './report-filter';

const DEFAULTS: ExplorerView = { from: '2026-10-26', to: '2026-11-24', groupBy: ['team', 'day'], filters: NO_FILTERS };
const TEAM_A = '0b6f7c1e-5d1a-4f3e-9c2b-6a7d8e9f0a1b';
const TEAM_B = '1c7a8d2f-6e2b-4a4f-8d3c-7b8e9f0a1b2c';

describe('explorer view in the URL', () => {
  it('should give the default view when the query string is empty', () => {
    expect(viewFromSearch('', DEFAULTS)).toEqual(DEFAULTS);
    expect(searchOfView(DEFAULTS, DEFAULTS)).toBe('');
  });

  it('should restore the same view from the query string it wrote', () => {
    const view: ExplorerView = {
      from: '2026-11-01',
      to: '2026-11-20',
      groupBy: ['user', 'tag'],
      filters: { ...NO_FILTERS, teamId: [TEAM_A, TEAM_B], tool: ['ping', 'huge'], tag: ['project:atlas'] },
    };
    const search = searchOfView(view, DEFAULTS);
    expect(search).toBe(
      `from=2026-11-01&to=2026-11-20&groupBy=user,tag&teamId=${TEAM_A},${TEAM_B}&tool=ping,huge&tag=project:atlas`,
    );
    expect(viewFromSearch(`?${search}`, DEFAULTS)).toEqual(view);
  });

  it('should keep an empty breakdown when the URL asks for none', () => {
    const view = { ...DEFAULTS, groupBy: [] };
    expect(viewFromSearch(searchOfView(view, DEFAULTS), DEFAULTS).groupBy).toEqual([]);
  });

  it('should drop ids that are not UUIDs, unknown dimensions, repeated values and a second tag when the URL was edited by hand', () => {
    const view = viewFromSearch(
      `teamId=nope,${TEAM_A},${TEAM_A}&groupBy=day,planet,team&tool=,ping,&tag=a,b`,
      DEFAULTS,
    );
    expect(view.filters.teamId).toEqual([TEAM_A]);
    expect(view.groupBy).toEqual(['team', 'day']);
    expect(view.filters.tool).toEqual(['ping']);
    expect(view.filters.tag).toEqual(['a']);
    expect(activeFilters(view.filters)).toEqual(['teamId', 'tool', 'tag']);
  });
});

describe('report API query of a view', () => {
  it('should send every filter as a comma-separated parameter, dimensions in the API order', () => {
    const q = reportQuery({
      from: '2026-11-01',
      to: '2026-11-30',
      groupBy: ['day', 'team'],
      filters: { ...NO_FILTERS, userId: [TEAM_A], upstreamId: [TEAM_B], tag: ['a'] },
    });
    expect(q).toEqual({
      from: '2026-11-01',
      to: '2026-11-30',
      groupBy: 'team,day',
      userId: TEAM_A,
      upstreamId: TEAM_B,
      tag: 'a',
    });
  });

  it('should leave groupBy out when nothing is grouped (one total row)', () => {
    expect(reportQuery({ ...DEFAULTS, groupBy: [] })).toEqual({ from: '2026-10-26', to: '2026-11-24' });
  });
});
