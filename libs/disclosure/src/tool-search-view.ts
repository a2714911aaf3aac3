/** Document frequencies remembered per view before its memo starts afresh. */
const DF_MEMO_SIZE = 10_000;

/**
 * The tools one caller may see and the collection statistics over exactly those, so that what a
 * caller's search ranks and reveals (scores, cursor) does not depend on tools it cannot see. It is
 * what an index built over only those tools would compute, without re-analysing any text.
 */
export class SearchView {
  private readonly docFrequencies = new Map<string, number>();

  constructor(
    /** 1 per visible document (index order); absent when every document is visible. */
    readonly visible: Uint8Array | undefined,
    readonly docCount: number,
    /** Average length per field over the visible documents, rounded to one decimal. */
    readonly avgLengths: readonly number[],
  ) {}

  sees(doc: number): boolean {
    return this.visible === undefined || this.visible[doc] === 1;
  }

  /** How many visible documents a posting list holds (memoised). */
  docFrequency(term: string, postings: readonly { doc: number }[] | undefined): number {
    if (!postings) return 0;
    if (!this.visible) return postings.length;
    let df = this.docFrequencies.get(term);
    if (df === undefined) {
      df = 0;
      for (const { doc } of postings) df += this.visible[doc];
      if (this.docFrequencies.size >= DF_MEMO_SIZE) this.docFrequencies.clear();
      this.docFrequencies.set(term, df);
    }
    return df;
  }
}
