/**
 * The maintained roll-ups (migrations/0008) against a recount of the rows they summarise: every row
 * on which they differ, labelled with its table. Empty when they agree. Rows of zeros count as absent.
 */
/** A pg pool or client: what the pipeline tests hold. */
interface Queryable {
  query<T extends object>(text: string): Promise<{ rows: T[] }>;
}

const STRONGEST = (col: string) =>
  `(array_agg(e.${col} order by e.magnitude desc, e.time, e.id)
     filter (where e.deleted_at is null and e.magnitude is not null))[1]`;

const RECOUNT_DAYS = `
  select (e.time at time zone 'UTC')::date as day,
    count(*) filter (where e.deleted_at is null)::int as events,
    count(*) filter (where e.deleted_at is not null)::int as deleted,
    count(*) filter (where e.deleted_at is null and e.tsunami_flag)::int as tsunami,
    count(*) filter (where e.deleted_at is null and e.magnitude is null)::int as mag_unknown,
    count(*) filter (where e.deleted_at is null and e.magnitude < 1)::int as mag_below_1,
    count(*) filter (where e.deleted_at is null and e.magnitude >= 1 and e.magnitude < 2)::int as mag_1,
    count(*) filter (where e.deleted_at is null and e.magnitude >= 2 and e.magnitude < 3)::int as mag_2,
    count(*) filter (where e.deleted_at is null and e.magnitude >= 3 and e.magnitude < 4)::int as mag_3,
    count(*) filter (where e.deleted_at is null and e.magnitude >= 4 and e.magnitude < 5)::int as mag_4,
    count(*) filter (where e.deleted_at is null and e.magnitude >= 5 and e.magnitude < 6)::int as mag_5,
    count(*) filter (where e.deleted_at is null and e.magnitude >= 6 and e.magnitude < 7)::int as mag_6,
    count(*) filter (where e.deleted_at is null and e.magnitude >= 7)::int as mag_7_plus,
    ${STRONGEST('id')} as strongest_id, ${STRONGEST('magnitude')} as strongest_magnitude,
    ${STRONGEST('time')} as strongest_time, ${STRONGEST('place')} as strongest_place
  from earthquake_events e group by 1`;

const KEPT_DAYS = `
  select day, events, deleted, tsunami, mag_unknown, mag_below_1, mag_1, mag_2, mag_3, mag_4, mag_5, mag_6,
    mag_7_plus, strongest_id, strongest_magnitude, strongest_time, strongest_place
  from earthquake_days where events <> 0 or deleted <> 0`;

const RECOUNT_STREAM_DAYS = `
  select s.stream_key, (e.time at time zone 'UTC')::date as day,
    count(*) filter (where e.deleted_at is null)::int as events,
    count(*) filter (where e.deleted_at is not null)::int as deleted
  from ingest_streams s join earthquake_events e
    on s.operation = 'earthquake' and gi_stream_keeps(s.params, e.magnitude, e.latitude, e.longitude)
  group by 1, 2`;

const KEPT_STREAM_DAYS = `select stream_key, day, events, deleted from earthquake_stream_days
  where events <> 0 or deleted <> 0`;

const RECOUNT_COST = `
  select coalesce(x.stream_key, '') as stream_key, (x.started_at at time zone 'UTC')::date as day, x.operation,
    coalesce(x.error_kind, '') as error_kind, count(*)::int as calls,
    count(*) filter (where x.billed)::int as billed_calls, count(*) filter (where x.billed is null)::int as billed_unknown,
    coalesce(sum(x.units) filter (where x.billed), 0)::float8 as units
  from gateway_executions x group by 1, 2, 3, 4`;

const KEPT_COST = `select stream_key, day, operation, error_kind, calls, billed_calls, billed_unknown, units
  from gateway_cost_days where calls <> 0 or billed_calls <> 0 or billed_unknown <> 0 or units <> 0`;

function difference(table: string, kept: string, recount: string): string {
  return `(select '${table}: kept, not recounted' as drift, k::text as row from ((${kept}) except (${recount})) k)
    union all
    (select '${table}: recounted, not kept', r::text from ((${recount}) except (${kept})) r)`;
}

/** Rows where a roll-up and its recount differ (at most 20), as text. */
export async function rollupDrift(db: Queryable): Promise<string[]> {
  const query = [
    difference('earthquake_days', KEPT_DAYS, RECOUNT_DAYS),
    difference('earthquake_stream_days', KEPT_STREAM_DAYS, RECOUNT_STREAM_DAYS),
    difference('gateway_cost_days', KEPT_COST, RECOUNT_COST),
  ].join('\nunion all\n');
  const result = await db.query<{ drift: string; row: string }>(`${query} limit 20`);
  return result.rows.map((r) => `${r.drift} ${r.row}`);
}
