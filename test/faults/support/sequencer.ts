import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The PostgreSQL outage scenario spends 150 s waiting on a stopped server of its own: started first,
 * it runs beside the other scenarios, run in the other forks, instead of after them.
 */
export default class LongOutageFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (f: TestSpecification) => (f.moduleId.includes('postgres-outage') ? 0 : 1);
    return [...sorted].sort((a, b) => first(a) - first(b));
  }
}
