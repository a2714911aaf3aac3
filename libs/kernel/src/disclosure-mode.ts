/** How an agent is shown its tools: a plain list, progressively, as code, or chosen by catalog size. */
export const DISCLOSURE_MODES = ['FULL', 'PROGRESSIVE', 'CODE', 'AUTO'] as const;
export type DisclosureModeName = (typeof DISCLOSURE_MODES)[number];
/** The modes an agent is served: AUTO is resolved by catalog size before serving. */
export const SERVED_DISCLOSURE_MODES = ['FULL', 'PROGRESSIVE', 'CODE'] as const;
