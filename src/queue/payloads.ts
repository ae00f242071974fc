import { z } from 'zod';
import { countryCodeSchema, indicatorCodeSchema, latitudeSchema, longitudeSchema, magnitudeSchema, radiusKmSchema } from '../gateway/schemas.js';

/** Job payloads are validated when taken off the queue: Redis is a boundary too. */
export const earthquakeWindowJobSchema = z.strictObject({
  streamKey: z.string().min(1),
  partitionKey: z.string().min(1),
  windowStartMs: z.number().int(),
  windowEndMs: z.number().int(),
  filters: z.strictObject({
    minMagnitude: magnitudeSchema.nullable(),
    circle: z
      .strictObject({ latitude: latitudeSchema, longitude: longitudeSchema, radiusKm: radiusKmSchema })
      .nullable(),
  }),
});
export type EarthquakeWindowJob = z.infer<typeof earthquakeWindowJobSchema>;

export const indicatorChunkJobSchema = z.strictObject({
  streamKey: z.string().min(1),
  partitionKey: z.string().min(1),
  indicator: indicatorCodeSchema,
  country: countryCodeSchema,
  startYear: z.number().int(),
  endYear: z.number().int(),
});
export type IndicatorChunkJob = z.infer<typeof indicatorChunkJobSchema>;
