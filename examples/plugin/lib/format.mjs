export function formatReport({ greeting, weather, outsideRead }) {
  return {
    greeting,
    forecast: `${weather.city}: ${weather.temperatureC} °C, ${weather.sky}`,
    outsideRead,
  };
}
