// The application's tools, in the Vercel AI SDK's tool() shape: what an agent host already has.
// `suaveplan-sandbox run --tools examples/code-mode/tools.mjs` loads this module too.
import { z } from "zod";

const CITIES = {
  Paris: { tempC: 21, currency: "EUR" },
  Oslo: { tempC: 4, currency: "NOK" },
  Tokyo: { tempC: 17, currency: "JPY" },
};
const RATES = { EUR: 1, NOK: 11.6, JPY: 162 };

export default {
  getWeather: {
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string().describe("City name, e.g. Paris") }),
    outputSchema: z.object({ tempC: z.number(), currency: z.string() }),
    execute: async ({ city }) => {
      const found = CITIES[city];
      if (found === undefined) throw new Error(`no weather station in ${city}`);
      return found;
    },
  },
  convert: {
    description: "Convert an amount of euros into another currency",
    inputSchema: z.object({ eur: z.number(), to: z.enum(["EUR", "NOK", "JPY"]) }),
    execute: async ({ eur, to }) => Math.round(eur * RATES[to] * 100) / 100,
  },
};
