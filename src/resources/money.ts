// Money rendering shared by transactions and orders.

const SYMBOLS: Record<string, string> = { USD: '$', CAD: '$', AUD: '$', NZD: '$', EUR: '€', GBP: '£', JPY: '¥', INR: '₹', BRL: 'R$', MXN: '$' };

export function currencySymbol(currency: string): string {
  return SYMBOLS[currency.toUpperCase()] ?? currency.toUpperCase();
}

/** 4900, USD → "$49.00"; negative amounts (refunds) → "-$49.00". */
export function formatMoney(cents: number, currency: string): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}${currencySymbol(currency)}${whole}.${String(abs % 100).padStart(2, '0')}`;
}
