// The demo account's names: a module of its own so that the CLI can find the demo site (the
// default of trigger, listen, clock and reset) without loading the demo generator.
export const DEMO_ACCOUNT = {
  account: 'Northwind Learning',
  owner: 'Avery Quinn',
  email: 'avery@northwind.example',
  site: 'Northwind Academy',
  subdomain: 'northwind-academy',
};
