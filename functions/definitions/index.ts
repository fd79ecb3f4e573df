export * from './functions';
export * from './resources';
export * from './routes';
