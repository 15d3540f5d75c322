import type { AlphaEventSchedule, AlphaLocalPost, AlphaTimeOfDay } from '../providers/alpha/alpha.types';
import type { PostEventSchedule, PostParams, PostTimeOfDay } from './post-params.types';

/**
 * A post's content as the alpha provider's local-post body: the one place the two meet. Our params keep the
 * provider's names and shapes, but GraphQL lets any optional field be null, which the provider takes only as absent.
 */

/** The provider leaves zero minutes and seconds out, and reads them as zero. */
function alphaTimeOfDay(time: PostTimeOfDay): AlphaTimeOfDay {
  return { hours: time.hours, minutes: time.minutes ?? 0, seconds: time.seconds ?? 0 };
}

function alphaSchedule(schedule: PostEventSchedule): AlphaEventSchedule {
  return {
    startDate: schedule.startDate,
    endDate: schedule.endDate,
    ...(schedule.startTime ? { startTime: alphaTimeOfDay(schedule.startTime) } : {}),
    ...(schedule.endTime ? { endTime: alphaTimeOfDay(schedule.endTime) } : {}),
  };
}

/** The body that creates the post at the provider (its output-only fields are the provider's to fill). */
export function alphaLocalPostOf(params: PostParams): AlphaLocalPost {
  const { callToAction, event, offer } = params;
  return {
    ...(params.languageCode != null ? { languageCode: params.languageCode } : {}),
    ...(params.summary != null ? { summary: params.summary } : {}),
    ...(params.topicType ? { topicType: params.topicType } : {}),
    ...(callToAction ? { callToAction: { actionType: callToAction.actionType, ...(callToAction.url != null ? { url: callToAction.url } : {}) } } : {}),
    ...(params.media ? { media: params.media.map(({ mediaFormat, sourceUrl }) => ({ mediaFormat, sourceUrl })) } : {}),
    ...(event
      ? { event: { ...(event.title != null ? { title: event.title } : {}), ...(event.schedule ? { schedule: alphaSchedule(event.schedule) } : {}) } }
      : {}),
    ...(offer
      ? {
          offer: {
            ...(offer.couponCode != null ? { couponCode: offer.couponCode } : {}),
            ...(offer.redeemOnlineUrl != null ? { redeemOnlineUrl: offer.redeemOnlineUrl } : {}),
            ...(offer.termsConditions != null ? { termsConditions: offer.termsConditions } : {}),
          },
        }
      : {}),
    ...(params.alertType != null ? { alertType: params.alertType } : {}),
    ...(params.scheduledTime != null ? { scheduledTime: params.scheduledTime } : {}),
  };
}
