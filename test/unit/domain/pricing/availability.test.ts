import { describe, expect, it } from 'vitest';
import { checkAvailability } from '../../../../functions/domain/pricing/availability';
import type {
  AvailabilityRules,
  BasketRequest,
  DisplayRule,
} from '../../../../functions/domain/pricing/types';

type Request = Pick<BasketRequest, 'region' | 'currency' | 'payment' | 'player_id'>;

const display: DisplayRule = { region: 'DE', currency_whitelist: ['EUR', 'USD', 'BTC'] };
const request = (overrides: Partial<Request> = {}): Request => ({
  region: 'DE',
  currency: 'USD',
  ...overrides,
});
const ruleOf = (req: Request, rules: AvailabilityRules, rule: DisplayRule | undefined = display) => {
  const result = checkAvailability(req, rule, rules, 'EUR');
  return result.available ? 'available' : result.rule;
};

describe('checkAvailability (rule 12), in rule order', () => {
  it('refuses a region without a display rule', () => {
    const result = checkAvailability(request({ region: 'FR' }), undefined, {}, 'EUR');
    expect(result).toEqual({ available: false, rule: 'region', reason: 'region FR is not served' });
  });

  it('refuses a currency outside the region whitelist', () => {
    expect(ruleOf(request({ currency: 'JPY' }), {})).toBe('currency_whitelist');
  });

  it('refuses a currency blocked everywhere', () => {
    const result = checkAvailability(
      request(),
      display,
      { blocked_currencies: [{ currency: 'USD' }] },
      'EUR',
    );
    expect(result).toEqual({ available: false, rule: 'blocked_currency', reason: 'USD is blocked' });
  });

  it('refuses a currency blocked in the buyer region, and allows it elsewhere', () => {
    const rules: AvailabilityRules = { blocked_currencies: [{ currency: 'USD', regions: ['DE'] }] };
    expect(checkAvailability(request(), display, rules, 'EUR')).toEqual({
      available: false,
      rule: 'blocked_currency',
      reason: 'USD is blocked in DE',
    });
    expect(ruleOf(request({ region: 'AT' }), rules, { ...display, region: 'AT' })).toBe('available');
  });

  it('refuses a blocked conversion from the base currency, only in that direction', () => {
    expect(ruleOf(request(), { blocked_conversions: [{ from: 'EUR', to: 'USD' }] })).toBe(
      'blocked_conversion',
    );
    expect(ruleOf(request(), { blocked_conversions: [{ from: 'USD', to: 'EUR' }] })).toBe('available');
  });

  it('refuses a currency blocked for the player, and only for that player', () => {
    const rules: AvailabilityRules = { player_blocks: [{ player_id: 'p1', currencies: ['USD'] }] };
    expect(ruleOf(request({ player_id: 'p1' }), rules)).toBe('player_block');
    expect(ruleOf(request({ player_id: 'p2' }), rules)).toBe('available');
    expect(ruleOf(request(), rules)).toBe('available');
  });

  it('refuses a blocked bank', () => {
    expect(ruleOf(request({ payment: { bank: 'bad_bank' } }), { blocked_banks: ['bad_bank'] })).toBe(
      'blocked_bank',
    );
    expect(ruleOf(request({ payment: { bank: 'ok_bank' } }), { blocked_banks: ['bad_bank'] })).toBe(
      'available',
    );
  });

  it('refuses a blocked token', () => {
    expect(ruleOf(request({ payment: { token: 'tok' } }), { blocked_tokens: ['tok'] })).toBe('blocked_token');
    expect(ruleOf(request({ payment: { token: 'tok' } }), {})).toBe('available');
  });

  it('refuses a provider blocked for every currency', () => {
    const rules: AvailabilityRules = { blocked_providers: [{ provider: 'psp' }] };
    expect(ruleOf(request({ payment: { provider: 'psp' } }), rules)).toBe('blocked_provider');
    expect(ruleOf(request({ payment: { provider: 'other' } }), rules)).toBe('available');
    expect(ruleOf(request({ payment: { provider: 'psp' } }), {})).toBe('available');
  });

  it('refuses a provider blocked for listed currencies only', () => {
    const rules: AvailabilityRules = { blocked_providers: [{ provider: 'psp', currencies: ['BTC'] }] };
    expect(ruleOf(request({ currency: 'BTC', payment: { provider: 'psp' } }), rules)).toBe(
      'blocked_provider',
    );
    expect(ruleOf(request({ payment: { provider: 'psp' } }), rules)).toBe('available');
    expect(ruleOf(request({ currency: 'BTC', payment: { provider: 'other' } }), rules)).toBe('available');
  });

  it('names the first refusing rule when several refuse', () => {
    const everything: AvailabilityRules = {
      blocked_currencies: [{ currency: 'USD' }],
      blocked_conversions: [{ from: 'EUR', to: 'USD' }],
      player_blocks: [{ player_id: 'p1', currencies: ['USD'] }],
      blocked_banks: ['b'],
      blocked_tokens: ['t'],
      blocked_providers: [{ provider: 'psp' }],
    };
    const req = request({ player_id: 'p1', payment: { bank: 'b', token: 't', provider: 'psp' } });
    expect(ruleOf(req, everything)).toBe('blocked_currency');
    const { blocked_currencies: _c, ...noCurrency } = everything;
    expect(ruleOf(req, noCurrency)).toBe('blocked_conversion');
    const { blocked_conversions: _v, ...noConversion } = noCurrency;
    expect(ruleOf(req, noConversion)).toBe('player_block');
    const { player_blocks: _p, ...noPlayer } = noConversion;
    expect(ruleOf(req, noPlayer)).toBe('blocked_bank');
    const { blocked_banks: _b, ...noBank } = noPlayer;
    expect(ruleOf(req, noBank)).toBe('blocked_token');
    const { blocked_tokens: _t, ...noToken } = noBank;
    expect(ruleOf(req, noToken)).toBe('blocked_provider');
  });

  it('is available when nothing refuses', () => {
    expect(checkAvailability(request({ payment: { method: 'card' } }), display, {}, 'EUR')).toEqual({
      available: true,
    });
  });
});
