import { describe, expect, it } from 'vitest';
import { matchRoute, ROUTES, type RouteDefinition, routeKey } from '../../../functions/definitions';
import { route } from '../support/routes';

const routes: readonly RouteDefinition[] = [
  route('GET', '/items/{item_id}', 'getItem'),
  route('GET', '/items/latest', 'latestItem'),
  route('POST', '/items', 'createItem'),
  route('GET', '/items/{item_id}/prices/{currency}', 'getPrice'),
];

describe('matchRoute', () => {
  it('prefers a static segment over a parameter, whatever the order of the table', () => {
    expect(matchRoute('GET', '/items/latest', routes).match?.route.operation).toBe('latestItem');
    expect(matchRoute('GET', '/items/latest', [...routes].reverse()).match?.route.operation).toBe(
      'latestItem',
    );
  });

  it('matches a parameter segment and returns the parameters by name', () => {
    const { match, pathExists } = matchRoute('GET', '/items/sku-1/prices/EUR', routes);
    expect(pathExists).toBe(true);
    expect(match?.route.operation).toBe('getPrice');
    expect(match?.pathParameters).toEqual({ item_id: 'sku-1', currency: 'EUR' });
  });

  it('percent-decodes path parameters', () => {
    const { match } = matchRoute('GET', '/items/a%20b%2Fc', routes);
    expect(match?.pathParameters).toEqual({ item_id: 'a b/c' });
  });

  it('does not throw on malformed percent-encoding and reports no match', () => {
    const result = matchRoute('GET', '/items/%E0%A4%A', routes);
    expect(result.match).toBeUndefined();
    expect(result.pathExists).toBe(false);
  });

  it('reports an existing path without a match when the method differs', () => {
    const result = matchRoute('DELETE', '/items/sku-1', routes);
    expect(result.match).toBeUndefined();
    expect(result.pathExists).toBe(true);
  });

  it('matches the method case-insensitively', () => {
    expect(matchRoute('post', '/items', routes).match?.route.operation).toBe('createItem');
  });

  it('reports an unknown path as neither matched nor existing', () => {
    expect(matchRoute('GET', '/nothing/here/at/all', routes)).toEqual({ pathExists: false });
    expect(matchRoute('GET', '/', routes)).toEqual({ pathExists: false });
  });

  it('uses the service route table by default', () => {
    expect(matchRoute('GET', '/health').match?.route).toBe(ROUTES[0]);
  });
});

describe('routeKey', () => {
  it('is the upper-case method and the resource path', () => {
    expect(routeKey('get', '/items/{item_id}')).toBe('GET /items/{item_id}');
  });
});
