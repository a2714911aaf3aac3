import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest starts the files it has timed before longest first, and on a clone with no timings (its
 * cache is empty: every fresh CI clone) the largest files first, and a long file started late
 * leaves the other workers idle at the end of the run. This sequencer keeps Vitest's order where
 * its cache knows a file, and otherwise orders by the durations committed in
 * test/file-durations.json (`node tools/test/record-file-durations.mjs` after a run refreshes
 * them). Files in neither run first, as Vitest runs files it does not know.
 */
export class FileDurationSequencer extends BaseSequencer {
  private readonly committed: Record<string, number> = JSON.parse(
    readFileSync(path.join(__dirname, '../file-durations.json'), 'utf8'),
  );

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const duration = (file: TestSpecification): number | undefined => {
      const key = `${file.project.name}:${path.relative(root, file.moduleId)}`;
      return this.ctx.cache.getFileTestResults(key)?.duration ?? this.committed[key];
    };
    const ordered = await super.sort(files);
    // Stable within what BaseSequencer groups (project, isolation): only the durations reorder.
    return ordered
      .map((file, index) => ({ file, index, ms: duration(file) }))
      .sort((a, b) => {
        if (a.file.project.name !== b.file.project.name) return a.index - b.index;
        if (a.ms === undefined || b.ms === undefined)
          return a.ms === b.ms ? a.index - b.index : a.ms === undefined ? -1 : 1;
        return b.ms - a.ms;
      })
      .map(({ file }) => file);
  }
}
