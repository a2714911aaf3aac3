import { ArrayMaxSize, IsArray, IsInt, Max, Min } from 'class-validator';
import { propertyStack } from './property-stack';

/** Alert thresholds of a budget: up to 10 whole percentages of its limit, 1 to 1000. */
export function IsAlertThresholds(): PropertyDecorator {
  return propertyStack(
    IsArray(),
    ArrayMaxSize(10),
    IsInt({ each: true }),
    Min(1, { each: true }),
    Max(1000, { each: true }),
  );
}
