export * from './budget-scripts';
export * from './budget.exception';
export * from './budget.service';
export * from './budget-admin.service';
export * from './budget.module';
export * from './budget-admin.exception';
