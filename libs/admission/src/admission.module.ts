import { DynamicModule, Module } from '@nestjs/common';
import { BudgetModule } from '@tollgate/budget';
import { RateLimitModule } from '@tollgate/rate-limit';
import { AdmissionLeases } from './admission-leases';
import { ADMISSION_SETTINGS, AdmissionSettings } from './admission-settings';
import { CallAdmissionService } from './call-admission.service';

@Module({})
export class AdmissionModule {
  /** Admission with the settings the app passes in (the edge, from its config). */
  static forSettings(settings: AdmissionSettings): DynamicModule {
    return {
      module: AdmissionModule,
      imports: [BudgetModule, RateLimitModule],
      providers: [{ provide: ADMISSION_SETTINGS, useValue: settings }, AdmissionLeases, CallAdmissionService],
      exports: [AdmissionLeases, CallAdmissionService],
    };
  }
}
