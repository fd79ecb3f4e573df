export * from './access';
export * from './authorization';
export * from './functions';
export * from './index-migration';
export * from './limits';
export * from './resources';
export * from './routes';
