import type { TestProject } from 'vitest/node';
import { createTemplateDatabase, dropDatabase } from '../libs/testing/src/test-database';

/**
 * Migrates one template database per test run; every test file then clones it
 * (`CREATE DATABASE ... TEMPLATE`, ~100 ms) so files run in parallel on their own data.
 */
export default async function setup(project: TestProject) {
  const template = await createTemplateDatabase();
  project.provide('templateDatabase', template);
  return async () => {
    await dropDatabase(template);
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}
