// Code mode, end to end, with a scripted stand-in for the model (no network):
// tool definitions → their TypeScript declarations in the prompt → the "model's"
// program → run under the isolate engine with hard limits → journal and result.
// Run: node examples/code-mode/agent.mjs   (needs isolated-vm; the engine runs the isolates in helper processes)
import { createSandbox } from "@suaveplan/sandbox";
import tools from "./tools.mjs";

const sandbox = createSandbox({
  engine: "isolate",
  timeout: 2000,
  memoryLimit: 64 * 1024 * 1024,
  tools,
  maxToolCalls: 20,
});

const systemPrompt = [
  "Write a JavaScript program that answers the user. These async functions exist:",
  sandbox.toolDeclarations(),
  "Return the answer as the program's last expression.",
].join("\n\n");

/** The stand-in model: it "reads" the prompt and writes a program that calls the tools. */
function scriptedModel(prompt, question) {
  if (!prompt.includes("getWeather(input: {")) throw new Error("the prompt lacks the tool declarations");
  return `
    // ${question}
    const cities = ["Paris", "Oslo", "Tokyo"];
    const reports = await Promise.all(cities.map((city) => tools.getWeather({ city })));
    const warmest = cities[reports.indexOf(reports.reduce((a, b) => (b.tempC > a.tempC ? b : a)))];
    const price = await tools.convert({ eur: 120, to: reports[cities.indexOf(warmest)].currency });
    console.log("warmest:", warmest);
    ({ warmest, hotelPerNight: price });
  `;
}

try {
  const program = scriptedModel(
    systemPrompt,
    "Where is it warmest, and what does a 120 EUR hotel cost there?",
  );
  const run = await sandbox.execute(program);
  console.log(
    "logs:",
    run.logs.map((entry) => entry.message),
  );
  console.log("result:", run.success ? run.result : run.error);
  console.log(
    "journal:",
    run.calls.map(
      (call) =>
        `${call.tool}(${JSON.stringify(call.input)}) → ${call.ok ? JSON.stringify(call.output) : call.status}`,
    ),
  );
  console.log("tool calls:", run.usage?.toolCalls);
} finally {
  await sandbox.destroy();
}
