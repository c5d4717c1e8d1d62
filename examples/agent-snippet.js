// An AI agent was asked: "Summarise this week's orders and flag anything odd."
// It wrote the snippet below. We do not trust it, so we run it in a sandbox:
//   suaveplan-sandbox run examples/agent-snippet.js --engine all
const orders = [
  { id: "A-1001", customer: "ana", total: 42.5, items: 3 },
  { id: "A-1002", customer: "bo", total: 18.0, items: 1 },
  { id: "A-1003", customer: "ana", total: 990.0, items: 2 },
  { id: "A-1004", customer: "chen", total: 61.25, items: 5 },
  { id: "A-1005", customer: "dee", total: 0, items: 0 },
];

console.log(`Analysing ${orders.length} orders…`);
// Agents love to "wait for the data to settle"; timers work in every engine.
await new Promise((resolve) => setTimeout(resolve, 25));

const totals = orders.map((o) => o.total);
const revenue = totals.reduce((sum, t) => sum + t, 0);
const mean = revenue / orders.length;
const spread = Math.sqrt(totals.reduce((s, t) => s + (t - mean) ** 2, 0) / orders.length);
const anomalies = orders
  .filter((o) => Math.abs(o.total - mean) > 1.5 * spread || o.items === 0)
  .map((o) => o.id);

if (anomalies.length > 0) console.warn(`Flagged ${anomalies.length} order(s): ${anomalies.join(", ")}`);

({
  orders: orders.length,
  revenue: Math.round(revenue * 100) / 100,
  topCustomer: Object.entries(
    orders.reduce((acc, o) => {
      acc[o.customer] = (acc[o.customer] ?? 0) + o.total;
      return acc;
    }, {}),
  ).sort((a, b) => b[1] - a[1])[0][0],
  anomalies,
});
