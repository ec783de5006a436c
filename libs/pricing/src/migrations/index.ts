import { PricingSchema1764000000000 } from './1764000000000-pricing-schema';

/** The pricing library's migrations, in order; the host app runs them with its own. */
export const pricingMigrations = [PricingSchema1764000000000];
